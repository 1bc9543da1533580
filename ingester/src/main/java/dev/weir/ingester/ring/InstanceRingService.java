package dev.weir.ingester.ring;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.lifecycle.InstanceLifecycler;
import dev.weir.ring.lifecycle.RingMetrics;
import dev.weir.ring.lifecycle.RingWatcher;
import dev.weir.ring.partition.PartitionRing;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The instance's ring membership and the ring clients of this process. Started after the
 * servers: registers JOINING, and turns ACTIVE at once when {@code activateOnStart} (classic
 * mode: by then everything before it runs) or when {@link #activate()} is called (Kafka mode:
 * after the catch-up; a store-gateway: after its first bucket sync, which may come before this
 * service started). Stopped first, so the instance leaves the ring before it stops serving.
 *
 * <p>One service per ring: the ingester ring ({@value RingConfig#INSTANCE_RING_KEY}, with the
 * partition ring beside it) or the store-gateway ring ({@value RingConfig#STORE_GATEWAY_RING_KEY}).
 *
 * <p>Thread-safe.
 */
public final class InstanceRingService implements Service {
  private final RingConfig config;
  private final KvService kv;
  private final String instanceId;
  private final IntSupplier grpcPort;
  private final RingMetrics metrics;
  private final LongSupplier clock;
  private final boolean activateOnStart;
  private final boolean register;
  private final String ringKey;
  private final boolean watchPartitions;
  private volatile boolean activationRequested;
  private volatile @Nullable InstanceLifecycler lifecycler;
  private volatile @Nullable RingWatcher<RingDesc> instances;
  private volatile @Nullable RingWatcher<PartitionRingDesc> partitions;
  /** Snapshots rebuilt only when the descriptor changed (readers are on hot paths). */
  private volatile PartitionRing partitionSnapshot = new PartitionRing(PartitionRingDesc.getDefaultInstance());
  private volatile @Nullable InstanceRing instanceSnapshot;
  private volatile long instanceSnapshotAt;
  /** Instance health depends on the clock, so that snapshot is also rebuilt once a second. */
  private static final long INSTANCE_SNAPSHOT_MAX_AGE_MILLIS = 1_000;

  /**
   * The ingester ring's service: membership of the instance ring ({@code register}) and the ring
   * clients of the instance and partition rings.
   *
   * @param register whether this process is a ring member (an ingester); otherwise it only
   *     watches the rings (a distributor)
   */
  public InstanceRingService(RingConfig config, KvService kv, String instanceId, IntSupplier grpcPort,
      RingMetrics metrics, LongSupplier clock, boolean register, boolean activateOnStart) {
    this(new Role(RingConfig.INSTANCE_RING_KEY, register, activateOnStart, true), config, kv, instanceId, grpcPort,
        metrics, clock);
  }

  /**
   * @param ringKey the ring this service joins or watches: {@value RingConfig#INSTANCE_RING_KEY}
   *     (then the partition ring is watched too) or {@value RingConfig#STORE_GATEWAY_RING_KEY}
   */
  public InstanceRingService(String ringKey, RingConfig config, KvService kv, String instanceId,
      IntSupplier grpcPort, RingMetrics metrics, LongSupplier clock, boolean register, boolean activateOnStart) {
    this(new Role(ringKey, register, activateOnStart, ringKey.equals(RingConfig.INSTANCE_RING_KEY)), config, kv,
        instanceId, grpcPort, metrics, clock);
  }

  /**
   * Membership of the distributor ring ({@code distributor} key): registered and ACTIVE once the
   * servers run, heartbeating, removed on shutdown; no partition ring client. The global
   * ingestion-rate strategy counts its healthy members.
   */
  public static InstanceRingService distributors(RingConfig config, KvService kv, String instanceId,
      IntSupplier grpcPort, RingMetrics metrics, LongSupplier clock) {
    return new InstanceRingService(new Role(RingConfig.DISTRIBUTOR_RING_KEY, true, true, false), config, kv,
        instanceId, grpcPort, metrics, clock);
  }

  /** Which ring, and what this process does in it. */
  private record Role(String ringKey, boolean register, boolean activateOnStart, boolean watchPartitions) {}

  private InstanceRingService(Role role, RingConfig config, KvService kv, String instanceId, IntSupplier grpcPort,
      RingMetrics metrics, LongSupplier clock) {
    this.ringKey = role.ringKey();
    this.register = role.register();
    this.watchPartitions = role.watchPartitions();
    this.config = config;
    this.kv = kv;
    this.instanceId = instanceId;
    this.grpcPort = grpcPort;
    this.metrics = metrics;
    this.clock = clock;
    this.activateOnStart = role.activateOnStart();
  }

  @Override
  public String name() {
    return ringKey.equals(RingConfig.INSTANCE_RING_KEY) ? "ring" : ringKey + "-ring";
  }

  @Override
  public void start() {
    instances = new RingWatcher<>(ringKey, kv.store(), ringKey, RingDesc.parser(), RingDesc.getDefaultInstance(),
        metrics, clock);
    if (watchPartitions) {
      RingWatcher<PartitionRingDesc> p = new RingWatcher<>("ingester-partitions", kv.store(),
          RingConfig.PARTITION_RING_KEY, PartitionRingDesc.parser(), PartitionRingDesc.getDefaultInstance(), metrics,
          clock);
      p.addListener(desc -> partitionSnapshot = new PartitionRing(desc));
      partitionSnapshot = new PartitionRing(p.current());
      partitions = p;
    }
    instances.addListener(desc -> instanceSnapshot = null);
    if (!register) {
      return;
    }
    InstanceLifecycler l = new InstanceLifecycler(new InstanceLifecycler.Config(ringKey,
        instanceId, config.advertisedAddress(grpcPort.getAsInt()), config.zone(), config.numTokens(),
        config.heartbeatPeriod(), config.unregisterOnShutdown()), kv.store(), metrics, clock);
    l.start();
    lifecycler = l;
    if (activateOnStart || activationRequested) {
      activate();
    }
  }

  /** Marks this instance ACTIVE in the ring; before {@link #start()}, as soon as it registered. */
  public void activate() {
    activationRequested = true;
    InstanceLifecycler l = lifecycler;
    if (l != null) {
      l.changeState(InstanceState.ACTIVE);
    }
  }

  @Override
  public @Nullable String notReadyReason() {
    InstanceLifecycler l = lifecycler;
    if (register && (l == null || l.desiredState() != InstanceState.ACTIVE)) {
      return "not ACTIVE in the ring yet";
    }
    return null;
  }

  /** The instance ring as this process currently sees it (at most a second old). */
  public InstanceRing instanceRing() {
    long now = clock.getAsLong();
    InstanceRing r = instanceSnapshot;
    if (r == null || now - instanceSnapshotAt > INSTANCE_SNAPSHOT_MAX_AGE_MILLIS) {
      RingWatcher<RingDesc> w = instances;
      r = new InstanceRing(w == null ? RingDesc.getDefaultInstance() : w.current(), now,
          config.heartbeatTimeout().toMillis());
      instanceSnapshot = r;
      instanceSnapshotAt = now;
    }
    return r;
  }

  /** The partition ring as this process currently sees it. */
  public PartitionRing partitionRing() {
    return partitionSnapshot;
  }

  /** Whether the ring clients are connected to the KV store (false: serving the last view). */
  public boolean kvConnected() {
    RingWatcher<RingDesc> w = instances;
    return w != null && w.connected();
  }

  @Override
  public void stop() {
    InstanceLifecycler l = lifecycler;
    if (l != null) {
      l.close();
    }
    RingWatcher<RingDesc> i = instances;
    if (i != null) {
      i.close();
    }
    RingWatcher<PartitionRingDesc> p = partitions;
    if (p != null) {
      p.close();
    }
  }
}
