package dev.weir.ingester.ingest;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.ring.KvService;
import dev.weir.ingester.ring.RingConfig;
import dev.weir.ring.lifecycle.PartitionLifecycler;
import dev.weir.ring.lifecycle.RingMetrics;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The ingester's place in the partition ring (Kafka mode): creates its partition if missing and
 * registers as an owner. The owner entry is removed on shutdown only with
 * {@code ingester.ring.unregister-on-shutdown}.
 */
public final class PartitionRingService implements Service {
  private final PartitionLifecycler.Config config;
  private final KvService kv;
  private final RingMetrics metrics;
  private final LongSupplier clock;
  private volatile @Nullable PartitionLifecycler lifecycler;

  public PartitionRingService(int partition, String ownerId, IngestStorageConfig ingest, RingConfig ring, KvService kv,
      RingMetrics metrics, LongSupplier clock) {
    this.config = new PartitionLifecycler.Config(RingConfig.PARTITION_RING_KEY, partition, ownerId,
        IngestStorageConfig.PARTITION_TOKENS, ingest.minPartitionOwners(), ingest.minPartitionOwnersDuration(),
        ring.heartbeatPeriod(), ring.unregisterOnShutdown());
    this.kv = kv;
    this.metrics = metrics;
    this.clock = clock;
  }

  @Override
  public String name() {
    return "partition-ring";
  }

  @Override
  public void start() {
    PartitionLifecycler l = new PartitionLifecycler(config, kv.store(), metrics, clock);
    l.start();
    lifecycler = l;
  }

  @Override
  public void stop() {
    PartitionLifecycler l = lifecycler;
    if (l != null) {
      l.close();
    }
  }
}
