package dev.weir.ring.lifecycle;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.OwnerState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.kv.KvException;
import dev.weir.ring.kv.KvStore;
import dev.weir.ring.partition.PartitionStateChange;
import dev.weir.ring.partition.PartitionTokens;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an ingester's place in the partition ring, following Mimir's rules: the partition is
 * created PENDING (with balanced tokens) if missing, the instance registers as its owner, and a
 * PENDING partition turns ACTIVE once it has had at least {@code minOwners} owners for
 * {@code minOwnersDuration}. Reconciliation changes no other state: an INACTIVE partition (being
 * drained for scale-in, see {@link #changeState}) stays INACTIVE, and a partition whose state is
 * locked keeps its state whatever it is. Runs on one thread; every change is a CAS.
 *
 * <p>Thread-safe.
 */
public final class PartitionLifecycler implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PartitionLifecycler.class);

  /**
   * @param removeOwnerOnShutdown remove this owner on stop (otherwise kept for a restart in place)
   * @param deleteInactiveAfter a partition INACTIVE for this long and without owners is removed
   *     from the ring (Mimir's {@code delete-inactive-partition-after}); 0 never removes one
   */
  public record Config(String ringKey, int partition, String ownerId, int numTokens, int minOwners,
      Duration minOwnersDuration, Duration period, boolean removeOwnerOnShutdown, Duration deleteInactiveAfter) {}

  private final Config config;
  private final KvStore kv;
  private final LongSupplier clock;
  private final Counter heartbeats;
  private final Counter failures;
  private final BackgroundLoop loop;
  private volatile boolean leaving;
  private volatile BooleanSupplier mayActivate = () -> true;
  private volatile Predicate<PartitionDesc> readyToLeave = p -> false;
  private volatile @Nullable PartitionDesc lastSeen;

  public PartitionLifecycler(Config config, KvStore kv, RingMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.kv = kv;
    this.clock = clock;
    this.heartbeats = metrics.heartbeats(config.ringKey());
    this.failures = metrics.heartbeatFailures(config.ringKey());
    this.loop = new BackgroundLoop("partition-lifecycler-" + config.ownerId(), config.period().toMillis(),
        this::reconcileQuietly);
  }

  /**
   * Creates the partition if needed and registers this owner, then keeps reconciling.
   *
   * @throws KvException when the store cannot be reached
   */
  public void start() {
    reconcile();
    log.info("msg=\"registered as partition owner\" ring={} partition={} owner={}", config.ringKey(),
        config.partition(), config.ownerId());
    loop.start();
  }

  private void reconcileQuietly() {
    try {
      reconcile();
      heartbeats.increment();
    } catch (KvException e) {
      failures.increment();
      log.warn("msg=\"partition ring update failed, retrying next period\" partition={} err=\"{}\"",
          config.partition(), String.valueOf(e.getMessage()).replace('"', '\''));
    }
  }

  /** One reconciliation (also called periodically). */
  void reconcile() {
    long now = clock.getAsLong();
    PartitionDesc seen = lastSeen;
    boolean ready = seen != null && seen.getState() == PartitionState.PARTITION_INACTIVE && readyToLeave.test(seen);
    byte[] stored = kv.cas(config.ringKey(), current -> {
      PartitionRingDesc desc = parse(current);
      PartitionRingDesc.Builder b = desc.toBuilder();
      PartitionDesc p = desc.getPartitionsMap().get(config.partition());
      if (p == null) {
        Map<Integer, int[]> existing = new HashMap<>();
        desc.getPartitionsMap().forEach((id, d) -> existing.put(id, d.getTokensList().stream().mapToInt(Integer::intValue).toArray()));
        int[] tokens = PartitionTokens.forNewPartition(existing, config.numTokens());
        p = PartitionDesc.newBuilder().setId(config.partition()).setState(PartitionState.PARTITION_PENDING)
            .setStateTimestamp(now).addAllTokens(Arrays.stream(tokens).boxed().toList()).build();
        b.putPartitions(config.partition(), p);
        log.info("msg=\"partition created\" partition={} state=PENDING tokens={}", config.partition(), tokens.length);
      }
      OwnerDesc me = desc.getOwnersMap().get(config.ownerId());
      if (me == null || me.getOwnedPartition() != config.partition() || me.getState() != OwnerState.OWNER_ACTIVE) {
        me = OwnerDesc.newBuilder().setOwnedPartition(config.partition()).setState(OwnerState.OWNER_ACTIVE)
            .setUpdatedTimestamp(now).build();
      }
      // Computed before the CAS, from the partition as the previous round saw it.
      if (me.getReadyToLeave() != ready) {
        me = me.toBuilder().setReadyToLeave(ready).build();
      }
      b.putOwners(config.ownerId(), me);
      if (p.getState() == PartitionState.PARTITION_PENDING && !p.getStateChangeLocked() && mayActivate.getAsBoolean()) {
        long settled = b.getOwnersMap().values().stream()
            .filter(o -> o.getOwnedPartition() == config.partition() && o.getState() == OwnerState.OWNER_ACTIVE)
            .filter(o -> now - o.getUpdatedTimestamp() >= config.minOwnersDuration().toMillis())
            .count();
        if (settled >= config.minOwners()) {
          b.putPartitions(config.partition(), p.toBuilder().setState(PartitionState.PARTITION_ACTIVE)
              .setStateTimestamp(now).build());
          log.info("msg=\"partition switched to ACTIVE\" partition={} owners={}", config.partition(), settled);
        }
      }
      deleteInactiveWithoutOwners(b, now);
      PartitionRingDesc next = b.build();
      return next.equals(desc) ? null : next.toByteArray();
    });
    lastSeen = parse(stored).getPartitionsMap().get(config.partition());
  }

  /** Removes the partitions INACTIVE for {@code deleteInactiveAfter} that no instance owns any more. */
  private void deleteInactiveWithoutOwners(PartitionRingDesc.Builder b, long now) {
    if (config.deleteInactiveAfter().isZero()) {
      return;
    }
    for (PartitionDesc p : Map.copyOf(b.getPartitionsMap()).values()) {
      boolean owned = b.getOwnersMap().values().stream().anyMatch(o -> o.getOwnedPartition() == p.getId());
      if (!owned && !p.getStateChangeLocked() && p.getState() == PartitionState.PARTITION_INACTIVE
          && now - p.getStateTimestamp() >= config.deleteInactiveAfter().toMillis()) {
        b.removePartitions(p.getId());
        log.info("msg=\"INACTIVE partition without owners removed from the ring\" partition={} inactive_since={}",
            p.getId(), p.getStateTimestamp());
      }
    }
  }

  /**
   * A condition this owner adds before its PENDING partition may turn ACTIVE (and receive writes):
   * an ingester passes "the partition exists in the Kafka topic", so that distributors never write
   * to a partition the topic lacks. Checked at every reconciliation; default: always.
   */
  public void activateOnlyWhen(BooleanSupplier condition) {
    this.mayActivate = condition;
  }

  /** Reconciles now rather than at the next period (the condition above just turned true). */
  public void reconcileSoon() {
    loop.wake();
  }

  /**
   * How this owner decides whether it may be removed once its partition is INACTIVE (scale-in);
   * the answer is published in its owner entry ({@code ready_to_leave}) at every reconciliation,
   * so that any process sees whether every owner, in every zone, may go. Never asked while the
   * partition is not INACTIVE (then false). Default: never ready.
   */
  public void reportReadyToLeave(Predicate<PartitionDesc> condition) {
    this.readyToLeave = condition;
  }

  /**
   * The owners of this lifecycler's partition (every zone) as stored now, by owner ID.
   *
   * @throws KvException when the store cannot be reached
   */
  public Map<String, OwnerDesc> owners() {
    Map<String, OwnerDesc> out = new java.util.TreeMap<>();
    parse(kv.get(config.ringKey())).getOwnersMap().forEach((id, o) -> {
      if (o.getOwnedPartition() == config.partition()) {
        out.put(id, o);
      }
    });
    return out;
  }

  /**
   * Whether this owner leaves for good (scale-in): then {@link #close()} removes the owner entry
   * whatever {@code removeOwnerOnShutdown} says, and with it the partition once it is INACTIVE
   * long enough. Set by a prepared downscale, reset when it is cancelled; not kept across restarts.
   */
  public void setLeaving(boolean leaving) {
    this.leaving = leaving;
  }

  /**
   * Switches this lifecycler's partition to {@code target} (ACTIVE or INACTIVE) by {@link
   * PartitionStateChange#apply its rules}, in one CAS.
   *
   * @return the partition as stored afterwards
   * @throws PartitionStateChange.RefusedException when the rules refuse it (nothing is written)
   * @throws KvException when the store cannot be reached (nothing is written)
   */
  public PartitionDesc changeState(PartitionState target) {
    long now = clock.getAsLong();
    PartitionDesc p = update(desc -> PartitionStateChange.apply(desc, config.partition(), target, now));
    log.info("msg=\"partition state requested\" partition={} state={} since={}", config.partition(),
        PartitionStateChange.name(p.getState()), p.getStateTimestamp());
    return p;
  }

  /**
   * Locks or unlocks the state of this lifecycler's partition, in one CAS.
   *
   * @return the partition as stored afterwards
   * @throws PartitionStateChange.RefusedException when the partition is not in the ring
   * @throws KvException when the store cannot be reached (nothing is written)
   */
  public PartitionDesc setStateLocked(boolean locked) {
    PartitionDesc p = update(desc -> PartitionStateChange.setLocked(desc, config.partition(), locked));
    log.info("msg=\"partition state lock set\" partition={} locked={}", config.partition(), p.getStateChangeLocked());
    return p;
  }

  /** One CAS applying {@code change} (which returns its argument to write nothing); the partition after it. */
  private PartitionDesc update(UnaryOperator<PartitionRingDesc> change) {
    byte[] stored = kv.cas(config.ringKey(), current -> {
      PartitionRingDesc desc = parse(current);
      PartitionRingDesc next = change.apply(desc);
      return next == desc ? null : next.toByteArray();
    });
    PartitionDesc p = parse(stored).getPartitionsMap().get(config.partition());
    if (p == null) {
      throw new KvException("partition " + config.partition() + " vanished from the ring during the change");
    }
    return p;
  }

  /**
   * This lifecycler's partition as stored now, or null when it is not in the ring.
   *
   * @throws KvException when the store cannot be reached
   */
  public @Nullable PartitionDesc partition() {
    return parse(kv.get(config.ringKey())).getPartitionsMap().get(config.partition());
  }

  /**
   * Whether this lifecycler's partition is INACTIVE in the ring now: then every owner, in every
   * zone, leaves it when it stops, whichever owner was asked to prepare the downscale (the state
   * is one entry for all zones, as in Mimir). False when the store cannot be read.
   */
  private boolean inactive() {
    try {
      PartitionDesc p = partition();
      return p != null && p.getState() == PartitionState.PARTITION_INACTIVE;
    } catch (KvException e) {
      return false;
    }
  }

  static PartitionRingDesc parse(byte @Nullable [] b) {
    if (b == null) {
      return PartitionRingDesc.getDefaultInstance();
    }
    try {
      return PartitionRingDesc.parseFrom(b);
    } catch (InvalidProtocolBufferException e) {
      throw new KvException("partition ring value is not a PartitionRingDesc: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    loop.close();
    if (!config.removeOwnerOnShutdown() && !leaving && !inactive()) {
      return;
    }
    try {
      long now = clock.getAsLong();
      kv.cas(config.ringKey(), current -> {
        PartitionRingDesc desc = parse(current);
        if (!desc.getOwnersMap().containsKey(config.ownerId())) {
          return null;
        }
        PartitionRingDesc.Builder b = desc.toBuilder().removeOwners(config.ownerId());
        deleteInactiveWithoutOwners(b, now);
        return b.build().toByteArray();
      });
    } catch (KvException e) {
      log.warn("msg=\"could not remove partition owner on shutdown\" owner={} err=\"{}\"", config.ownerId(),
          String.valueOf(e.getMessage()).replace('"', '\''));
    }
  }
}
