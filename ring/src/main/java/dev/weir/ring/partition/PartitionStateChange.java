package dev.weir.ring.partition;

import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;

/**
 * The rules of an operator-requested partition state change (Mimir's prepare-partition-downscale):
 * ACTIVE → INACTIVE to drain a partition before scale-in, INACTIVE → ACTIVE to cancel. A request
 * for the current state changes nothing (the state timestamp stays, so the INACTIVE time keeps
 * counting). A PENDING partition cannot be made INACTIVE: a cancelled downscale could not tell
 * which state to return to, and the lifecycler activates PENDING partitions by itself. A
 * partition whose state is locked is never changed. Stateless.
 */
public final class PartitionStateChange {
  private PartitionStateChange() {}

  /** Why a state change was refused; {@link #kind()} tells a missing partition from a conflict. */
  public static final class RefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Kind {
      /** The partition is not in the ring (never created, or already removed). */
      NOT_FOUND,
      /** The partition's state or lock does not allow the change. */
      CONFLICT
    }

    private final Kind kind;

    public RefusedException(Kind kind, String message) {
      super(message);
      this.kind = kind;
    }

    public Kind kind() {
      return kind;
    }
  }

  /**
   * The ring after switching {@code partition} to {@code target} at {@code nowMillis}, or {@code desc}
   * itself when it already is in that state.
   *
   * @param target {@link PartitionState#PARTITION_INACTIVE} or {@link PartitionState#PARTITION_ACTIVE}
   * @throws RefusedException when the partition is missing, locked, or PENDING
   * @throws IllegalArgumentException for any other target
   */
  public static PartitionRingDesc apply(PartitionRingDesc desc, int partition, PartitionState target,
      long nowMillis) {
    if (target != PartitionState.PARTITION_INACTIVE && target != PartitionState.PARTITION_ACTIVE) {
      throw new IllegalArgumentException("only ACTIVE and INACTIVE can be requested, not " + target);
    }
    PartitionDesc p = desc.getPartitionsMap().get(partition);
    if (p == null) {
      throw new RefusedException(RefusedException.Kind.NOT_FOUND,
          "partition " + partition + " is not in the partition ring (not created yet, or already removed)");
    }
    if (p.getState() == target) {
      return desc;
    }
    if (p.getStateChangeLocked()) {
      throw new RefusedException(RefusedException.Kind.CONFLICT, "partition " + partition + " is "
          + name(p.getState()) + " and its state is locked: unlock it before changing it");
    }
    if (p.getState() != PartitionState.PARTITION_ACTIVE && p.getState() != PartitionState.PARTITION_INACTIVE) {
      throw new RefusedException(RefusedException.Kind.CONFLICT, "partition " + partition + " is "
          + name(p.getState()) + ": only an ACTIVE partition can be made INACTIVE and only an INACTIVE one ACTIVE");
    }
    PartitionDesc next = p.toBuilder().setState(target).setStateTimestamp(nowMillis).build();
    return desc.toBuilder().putPartitions(partition, next).build();
  }

  /**
   * The ring with {@code partition}'s state locked or unlocked (Mimir's {@code state_change_locked}),
   * or {@code desc} itself when it already is.
   *
   * @throws RefusedException (NOT_FOUND) when the partition is missing
   */
  public static PartitionRingDesc setLocked(PartitionRingDesc desc, int partition, boolean locked) {
    PartitionDesc p = desc.getPartitionsMap().get(partition);
    if (p == null) {
      throw new RefusedException(RefusedException.Kind.NOT_FOUND,
          "partition " + partition + " is not in the partition ring (not created yet, or already removed)");
    }
    if (p.getStateChangeLocked() == locked) {
      return desc;
    }
    return desc.toBuilder().putPartitions(partition, p.toBuilder().setStateChangeLocked(locked).build()).build();
  }

  /** The state without its {@code PARTITION_} prefix, as pages and messages show it. */
  public static String name(PartitionState s) {
    return s.name().replace("PARTITION_", "");
  }
}
