package dev.weir.ring.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionStateChange.RefusedException;
import org.junit.jupiter.api.Test;

class PartitionStateChangeTest {
  private static PartitionRingDesc ring(PartitionState state, boolean locked) {
    return PartitionRingDesc.newBuilder().putPartitions(1, PartitionDesc.newBuilder().setId(1).setState(state)
        .setStateTimestamp(100).setStateChangeLocked(locked).addTokens(7).build()).build();
  }

  @Test
  void activeTurnsInactiveWithTheTimeOfTheSwitchAndBack() {
    PartitionRingDesc inactive = PartitionStateChange.apply(ring(PartitionState.PARTITION_ACTIVE, false), 1,
        PartitionState.PARTITION_INACTIVE, 5_000);
    assertThat(inactive.getPartitionsOrThrow(1).getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
    assertThat(inactive.getPartitionsOrThrow(1).getStateTimestamp()).isEqualTo(5_000);
    assertThat(inactive.getPartitionsOrThrow(1).getTokensList()).containsExactly(7);
    PartitionRingDesc active = PartitionStateChange.apply(inactive, 1, PartitionState.PARTITION_ACTIVE, 9_000);
    assertThat(active.getPartitionsOrThrow(1).getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    assertThat(active.getPartitionsOrThrow(1).getStateTimestamp()).isEqualTo(9_000);
  }

  @Test
  void repeatingARequestKeepsTheFirstSwitchTime() {
    PartitionRingDesc inactive = ring(PartitionState.PARTITION_INACTIVE, false);
    assertThat(PartitionStateChange.apply(inactive, 1, PartitionState.PARTITION_INACTIVE, 5_000)).isSameAs(inactive);
  }

  @Test
  void pendingPartitionCannotBeMadeInactiveNorActive() {
    for (PartitionState target : new PartitionState[] {PartitionState.PARTITION_INACTIVE,
        PartitionState.PARTITION_ACTIVE}) {
      assertThatThrownBy(() -> PartitionStateChange.apply(ring(PartitionState.PARTITION_PENDING, false), 1, target, 1))
          .isInstanceOfSatisfying(RefusedException.class, e -> assertThat(e.kind())
              .isEqualTo(RefusedException.Kind.CONFLICT)).hasMessageContaining("is PENDING");
    }
  }

  @Test
  void lockedPartitionIsNotChanged() {
    assertThatThrownBy(() -> PartitionStateChange.apply(ring(PartitionState.PARTITION_ACTIVE, true), 1,
        PartitionState.PARTITION_INACTIVE, 1))
        .isInstanceOfSatisfying(RefusedException.class, e -> assertThat(e.kind())
            .isEqualTo(RefusedException.Kind.CONFLICT)).hasMessageContaining("locked");
  }

  @Test
  void lockIsSetAndClearedWithoutTouchingTheState() {
    PartitionRingDesc locked = PartitionStateChange.setLocked(ring(PartitionState.PARTITION_ACTIVE, false), 1, true);
    assertThat(locked.getPartitionsOrThrow(1).getStateChangeLocked()).isTrue();
    assertThat(locked.getPartitionsOrThrow(1).getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    assertThat(locked.getPartitionsOrThrow(1).getStateTimestamp()).isEqualTo(100);
    assertThat(PartitionStateChange.setLocked(locked, 1, true)).isSameAs(locked);
    assertThat(PartitionStateChange.setLocked(locked, 1, false).getPartitionsOrThrow(1).getStateChangeLocked())
        .isFalse();
    assertThatThrownBy(() -> PartitionStateChange.setLocked(locked, 2, true))
        .isInstanceOfSatisfying(RefusedException.class, e -> assertThat(e.kind())
            .isEqualTo(RefusedException.Kind.NOT_FOUND));
  }

  @Test
  void missingPartitionIsNotFound() {
    assertThatThrownBy(() -> PartitionStateChange.apply(ring(PartitionState.PARTITION_ACTIVE, false), 2,
        PartitionState.PARTITION_INACTIVE, 1))
        .isInstanceOfSatisfying(RefusedException.class, e -> assertThat(e.kind())
            .isEqualTo(RefusedException.Kind.NOT_FOUND)).hasMessageContaining("partition 2 is not in the");
  }

  @Test
  void inactivePartitionReceivesNoSeries() {
    PartitionRingDesc.Builder b = PartitionRingDesc.newBuilder();
    for (int p = 0; p < 2; p++) {
      b.putPartitions(p, PartitionDesc.newBuilder().setId(p).setState(PartitionState.PARTITION_ACTIVE)
          .addAllTokens(java.util.Arrays.stream(PartitionTokens.forNewPartition(existing(b.build()), 64)).boxed()
              .toList()).build());
    }
    PartitionRing before = new PartitionRing(b.build());
    int toOne = 0;
    for (int i = 0; i < 1_000; i++) {
      toOne += before.partitionFor(dev.weir.ring.SeriesHash.of("t", new String[] {"s", String.valueOf(i)})) == 1
          ? 1 : 0;
    }
    assertThat(toOne).as("partition 1 received series before").isPositive();
    PartitionRing after = new PartitionRing(PartitionStateChange.apply(b.build(), 1,
        PartitionState.PARTITION_INACTIVE, 1));
    assertThat(after.activePartitions()).containsExactly(0);
    for (int i = 0; i < 1_000; i++) {
      assertThat(after.partitionFor(dev.weir.ring.SeriesHash.of("t", new String[] {"s", String.valueOf(i)})))
          .isZero();
    }
  }

  private static java.util.Map<Integer, int[]> existing(PartitionRingDesc d) {
    java.util.Map<Integer, int[]> m = new java.util.HashMap<>();
    d.getPartitionsMap().forEach((id, p) -> m.put(id, p.getTokensList().stream().mapToInt(Integer::intValue)
        .toArray()));
    return m;
  }
}
