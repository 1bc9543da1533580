package dev.weir.ingester.ring;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ring.kv.KvConfig;
import dev.weir.ring.kv.KvMetrics;
import dev.weir.ring.kv.KvStore;
import org.jspecify.annotations.Nullable;

/** Opens the KV store first and closes it last. Thread-safe for {@link #store()} after start. */
public final class KvService implements Service {
  private final KvConfig config;
  private final KvMetrics metrics;
  private volatile @Nullable KvStore store;

  public KvService(KvConfig config, KvMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
  }

  @Override
  public String name() {
    return "kv-store";
  }

  @Override
  public void start() {
    store = config.open(metrics);
  }

  public KvStore store() {
    KvStore s = store;
    if (s == null) {
      throw new IllegalStateException("KV store not started");
    }
    return s;
  }

  @Override
  public void stop() {
    KvStore s = store;
    if (s != null) {
      s.close();
    }
  }
}
