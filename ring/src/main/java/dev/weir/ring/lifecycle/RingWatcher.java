package dev.weir.ring.lifecycle;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import dev.weir.ring.kv.KvStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client view of a ring: watches its key and keeps the last decoded descriptor in memory, so
 * readers (the write path, status pages) never block on the KV store. While the store is
 * unreachable it keeps serving its last view; the log, {@link #connected()} and the gauge
 * {@code weir_ring_client_kv_connected} say so.
 *
 * <p>Thread-safe.
 */
public final class RingWatcher<T extends Message> implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RingWatcher.class);

  private final String ring;
  private final Parser<T> parser;
  private final LongSupplier clock;
  private final Counter updates;
  private final CopyOnWriteArrayList<Consumer<T>> listeners = new CopyOnWriteArrayList<>();
  private final KvStore.Watch watch;
  private final T empty;
  private volatile T current;
  private volatile boolean connected;
  private volatile @Nullable String lastError;
  private volatile long lastUpdateMillis;

  public RingWatcher(String ring, KvStore kv, String key, Parser<T> parser, T empty, RingMetrics metrics,
      LongSupplier clock) {
    this.ring = ring;
    this.parser = parser;
    this.clock = clock;
    this.empty = empty;
    this.current = empty;
    this.updates = metrics.updates(ring);
    Gauge.builder("weir.ring.client.kv.connected", this, w -> w.connected ? 1 : 0)
        .description("1 while the ring client's watch on the KV store is connected; 0 while it serves its"
            + " last known view.")
        .tag("ring", ring).register(metrics.registry);
    this.watch = kv.watch(key, new KvStore.WatchListener() {
      @Override
      public void onValue(byte @Nullable [] value) {
        update(value);
      }

      @Override
      public void onConnection(boolean ok, @Nullable String reason) {
        connected = ok;
        lastError = reason;
        if (ok) {
          log.info("msg=\"ring client connected to the KV store\" ring={}", ring);
        } else {
          log.warn("msg=\"ring client lost the KV store; serving the last known ring\" ring={} err=\"{}\"", ring,
              String.valueOf(reason).replace('"', '\''));
        }
      }
    });
  }

  private void update(byte @Nullable [] value) {
    T next;
    try {
      next = value == null ? empty : parser.parseFrom(value);
    } catch (InvalidProtocolBufferException e) {
      log.error("msg=\"undecodable ring value ignored\" ring={} err=\"{}\"", ring, e.getMessage());
      return;
    }
    current = next;
    lastUpdateMillis = clock.getAsLong();
    updates.increment();
    for (Consumer<T> l : listeners) {
      l.accept(next);
    }
  }

  /** The last known ring descriptor (empty until the first read). */
  public T current() {
    return current;
  }

  public boolean connected() {
    return connected;
  }

  public @Nullable String lastError() {
    return lastError;
  }

  /** Wall-clock time of the last update received. */
  public long lastUpdateMillis() {
    return lastUpdateMillis;
  }

  /** Called with every new descriptor, on the watch thread. */
  public void addListener(Consumer<T> l) {
    listeners.add(l);
  }

  @Override
  public void close() {
    watch.close();
  }
}
