package dev.weir.ingester.ingest;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.ring.KvService;
import dev.weir.ingester.ring.RingConfig;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.lifecycle.PartitionLifecycler;
import dev.weir.ring.lifecycle.RingMetrics;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The ingester's place in the partition ring (Kafka mode): creates its partition if missing and
 * registers as an owner. The owner entry is removed on shutdown with
 * {@code ingester.ring.unregister-on-shutdown}, or after its partition was made INACTIVE through
 * {@link #changeState} (prepare-partition-downscale) by this process.
 */
public final class PartitionRingService implements Service, PrepareDownscaleApi.OwnPartition {
  private final PartitionLifecycler.Config config;
  private final KvService kv;
  private final RingMetrics metrics;
  private final LongSupplier clock;
  private volatile @Nullable PartitionLifecycler lifecycler;
  private volatile BooleanSupplier mayActivate = () -> true;
  private volatile Predicate<PartitionDesc> readyToLeave = p -> false;

  public PartitionRingService(int partition, String ownerId, IngestStorageConfig ingest, RingConfig ring, KvService kv,
      RingMetrics metrics, LongSupplier clock) {
    this.config = new PartitionLifecycler.Config(RingConfig.PARTITION_RING_KEY, partition, ownerId,
        IngestStorageConfig.PARTITION_TOKENS, ingest.minPartitionOwners(), ingest.minPartitionOwnersDuration(),
        ring.heartbeatPeriod(), ring.unregisterOnShutdown(), ingest.deleteInactivePartitionAfter());
    this.kv = kv;
    this.metrics = metrics;
    this.clock = clock;
  }

  @Override
  public String name() {
    return "partition-ring";
  }

  /** See {@link PartitionLifecycler#activateOnlyWhen}; call before {@link #start()}. */
  public void activateOnlyWhen(BooleanSupplier condition) {
    this.mayActivate = condition;
  }

  /** Reconciles at once (its activation condition turned true); nothing before start. */
  public void reconcileSoon() {
    PartitionLifecycler l = lifecycler;
    if (l != null) {
      l.reconcileSoon();
    }
  }

  /** See {@link PartitionLifecycler#reportReadyToLeave}; call before {@link #start()}. */
  public void reportReadyToLeave(Predicate<PartitionDesc> condition) {
    this.readyToLeave = condition;
  }

  @Override
  public void start() {
    PartitionLifecycler l = new PartitionLifecycler(config, kv.store(), metrics, clock);
    l.activateOnlyWhen(mayActivate);
    l.reportReadyToLeave(readyToLeave);
    l.start();
    lifecycler = l;
  }

  /**
   * Switches this ingester's partition to ACTIVE or INACTIVE (prepare-partition-downscale).
   *
   * @throws dev.weir.ring.partition.PartitionStateChange.RefusedException when the ring's rules
   *     refuse it
   * @throws dev.weir.ring.kv.KvException when the KV store cannot be reached
   * @throws IllegalStateException before the service started
   */
  @Override
  public PartitionDesc changeState(PartitionState target) {
    PartitionLifecycler l = running();
    PartitionDesc p = l.changeState(target);
    // Mimir's rule: an owner that prepared its downscale leaves the ring when it stops.
    l.setLeaving(p.getState() == PartitionState.PARTITION_INACTIVE);
    return p;
  }

  @Override
  public PartitionDesc setStateLocked(boolean locked) {
    return running().setStateLocked(locked);
  }

  /**
   * This ingester's partition as stored now, or null when it is not in the ring.
   *
   * @throws dev.weir.ring.kv.KvException when the KV store cannot be reached
   * @throws IllegalStateException before the service started
   */
  @Override
  public @Nullable PartitionDesc partition() {
    return running().partition();
  }

  @Override
  public int partitionId() {
    return config.partition();
  }

  @Override
  public String ownerId() {
    return config.ownerId();
  }

  @Override
  public Map<String, OwnerDesc> owners() {
    return running().owners();
  }

  private PartitionLifecycler running() {
    PartitionLifecycler l = lifecycler;
    if (l == null) {
      throw new IllegalStateException("the partition lifecycler has not started yet");
    }
    return l;
  }

  @Override
  public void stop() {
    PartitionLifecycler l = lifecycler;
    if (l != null) {
      l.close();
    }
  }
}
