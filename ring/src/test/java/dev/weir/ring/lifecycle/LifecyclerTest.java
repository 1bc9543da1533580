package dev.weir.ring.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.kv.InMemoryKvStore;
import dev.weir.ring.partition.PartitionRing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LifecyclerTest {
  private final InMemoryKvStore kv = new InMemoryKvStore();
  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    kv.close();
  }

  private InstanceLifecycler instance(String id, boolean unregister) {
    InstanceLifecycler l = new InstanceLifecycler(new InstanceLifecycler.Config("ingester", id, id + ":9095", "zone-a",
        16, Duration.ofHours(1), unregister), kv, RingMetrics.noop(), clock::get);
    return l;
  }

  private RingDesc ring() {
    return InstanceLifecycler.parse(kv.get("ingester"));
  }

  @Test
  void registersJoiningThenAppliesStateChangesAndHeartbeats() {
    InstanceLifecycler l = instance("ingester-1", true);
    l.start();
    toClose.add(l);
    InstanceDesc d = ring().getInstancesOrThrow("ingester-1");
    assertThat(d.getState()).isEqualTo(InstanceState.JOINING);
    assertThat(d.getTokensCount()).isEqualTo(16);
    assertThat(d.getAddr()).isEqualTo("ingester-1:9095");
    assertThat(d.getZone()).isEqualTo("zone-a");
    assertThat(d.getRegisteredTimestamp()).isEqualTo(1_000_000);
    clock.set(1_005_000);
    l.changeState(InstanceState.ACTIVE);
    await().untilAsserted(() -> {
      InstanceDesc now = ring().getInstancesOrThrow("ingester-1");
      assertThat(now.getState()).isEqualTo(InstanceState.ACTIVE);
      assertThat(now.getHeartbeatTimestamp()).isEqualTo(1_005_000);
      assertThat(now.getTokensList()).isEqualTo(d.getTokensList());
    });
  }

  @Test
  void readersSeeAnInstanceUnhealthyWhenItsHeartbeatIsOlderThanTheTimeout() {
    InstanceLifecycler l = instance("ingester-1", true);
    l.start();
    toClose.add(l);
    InstanceDesc d = ring().getInstancesOrThrow("ingester-1");
    assertThat(new InstanceRing(ring(), clock.get() + 60_000, 60_000).healthy(d)).isTrue();
    assertThat(new InstanceRing(ring(), clock.get() + 60_001, 60_000).healthy(d)).isFalse();
  }

  @Test
  void unregistersOnShutdownOrStaysLeavingAndReusesItsTokensAfterARestartInPlace() {
    InstanceLifecycler a = instance("a", true);
    a.start();
    a.close();
    assertThat(ring().getInstancesMap()).doesNotContainKey("a");

    InstanceLifecycler b = instance("b", false);
    b.start();
    List<Integer> tokens = ring().getInstancesOrThrow("b").getTokensList();
    b.close();
    assertThat(ring().getInstancesOrThrow("b").getState()).isEqualTo(InstanceState.LEAVING);
    InstanceLifecycler again = instance("b", false);
    again.start();
    toClose.add(again);
    assertThat(ring().getInstancesOrThrow("b").getTokensList()).isEqualTo(tokens);
    assertThat(ring().getInstancesOrThrow("b").getState()).isEqualTo(InstanceState.JOINING);
  }

  @Test
  void instancesGetDisjointTokensAndTheActiveOwnerServesWrites() {
    Set<Integer> all = new HashSet<>();
    for (int i = 0; i < 5; i++) {
      InstanceLifecycler l = instance("i" + i, true);
      l.start();
      toClose.add(l);
      l.changeState(InstanceState.ACTIVE);
    }
    await().until(() -> ring().getInstancesMap().values().stream().allMatch(d -> d.getState() == InstanceState.ACTIVE));
    ring().getInstancesMap().values().forEach(d -> all.addAll(d.getTokensList()));
    assertThat(all).hasSize(5 * 16);
    InstanceRing r = new InstanceRing(ring(), clock.get(), 60_000);
    assertThat(r.ownerOf(12345)).isNotNull();
    assertThat(r.instances().stream().mapToDouble(d -> r.ownership(d.getId())).sum()).isCloseTo(1.0,
        org.assertj.core.data.Offset.offset(1e-9));
  }

  private PartitionLifecycler partition(String owner, int p, Duration minDuration) {
    return new PartitionLifecycler(new PartitionLifecycler.Config("ingester-partitions", p, owner, 32, 1, minDuration,
        Duration.ofHours(1), false, Duration.ofHours(13)), kv, RingMetrics.noop(), clock::get);
  }

  /**
   * The started lifecycler of {@code ingester-zone-a-<p>} for partition p, ACTIVE at once.
   *
   * @param closeAfterTest false when the test closes it itself
   */
  private PartitionLifecycler startedPartition(int p, boolean closeAfterTest) {
    PartitionLifecycler l = partition("ingester-zone-a-" + p, p, Duration.ZERO);
    l.start();
    if (closeAfterTest) {
      toClose.add(l);
    }
    return l;
  }

  private PartitionRingDesc partitions() {
    return PartitionLifecycler.parse(kv.get("ingester-partitions"));
  }

  @Test
  void partitionIsCreatedPendingAndTurnsActiveAfterItsOwnerSettled() {
    PartitionLifecycler l = partition("ingester-zone-a-3", 3, Duration.ofSeconds(10));
    l.start();
    toClose.add(l);
    assertThat(partitions().getPartitionsOrThrow(3).getState()).isEqualTo(PartitionState.PARTITION_PENDING);
    assertThat(partitions().getPartitionsOrThrow(3).getTokensCount()).isEqualTo(32);
    clock.addAndGet(9_999);
    l.reconcile();
    assertThat(partitions().getPartitionsOrThrow(3).getState()).isEqualTo(PartitionState.PARTITION_PENDING);
    clock.addAndGet(1);
    l.reconcile();
    assertThat(partitions().getPartitionsOrThrow(3).getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    assertThat(new PartitionRing(partitions()).activePartitions()).containsExactly(3);
  }

  @Test
  void twoZonesShareAPartitionAndEachOwnsIt() {
    PartitionLifecycler a = partition("ingester-zone-a-0", 0, Duration.ZERO);
    PartitionLifecycler b = partition("ingester-zone-b-0", 0, Duration.ZERO);
    a.start();
    b.start();
    toClose.add(a);
    toClose.add(b);
    PartitionRing r = new PartitionRing(partitions());
    assertThat(r.partitions()).hasSize(1);
    assertThat(r.owners(0)).containsExactly("ingester-zone-a-0", "ingester-zone-b-0");
    assertThat(r.activePartitions()).containsExactly(0);
  }

  @Test
  void reconciliationNeverReactivatesAnInactivePartition() {
    PartitionLifecycler l = partition("ingester-zone-a-3", 3, Duration.ZERO);
    l.start();
    toClose.add(l);
    assertThat(partitions().getPartitionsOrThrow(3).getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    clock.set(2_000_000);
    assertThat(l.changeState(PartitionState.PARTITION_INACTIVE).getStateTimestamp()).isEqualTo(2_000_000);
    clock.addAndGet(3_600_000);
    l.reconcile();
    assertThat(partitions().getPartitionsOrThrow(3).getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
    assertThat(partitions().getPartitionsOrThrow(3).getStateTimestamp()).isEqualTo(2_000_000);
    assertThat(l.changeState(PartitionState.PARTITION_ACTIVE).getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    assertThat(l.partition().getStateTimestamp()).isEqualTo(5_600_000);
  }

  @Test
  void reconciliationLeavesALockedPendingPartitionPending() {
    PartitionLifecycler l = partition("ingester-zone-a-4", 4, Duration.ZERO);
    kv.cas("ingester-partitions", cur -> PartitionRingDesc.newBuilder().putPartitions(4,
        dev.weir.proto.ring.PartitionDesc.newBuilder().setId(4).setState(PartitionState.PARTITION_PENDING)
            .setStateChangeLocked(true).addTokens(1).build()).build().toByteArray());
    l.start();
    toClose.add(l);
    clock.addAndGet(60_000);
    l.reconcile();
    assertThat(partitions().getPartitionsOrThrow(4).getState()).isEqualTo(PartitionState.PARTITION_PENDING);
    assertThat(partitions().getOwnersMap()).containsKey("ingester-zone-a-4");
  }

  @Test
  void refusedChangeWritesNothing() {
    PartitionLifecycler l = partition("ingester-zone-a-5", 5, Duration.ofHours(1));
    l.start();
    toClose.add(l);
    PartitionRingDesc before = partitions();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.changeState(PartitionState.PARTITION_INACTIVE))
        .isInstanceOf(dev.weir.ring.partition.PartitionStateChange.RefusedException.class);
    assertThat(partitions()).isEqualTo(before);
  }

  @Test
  void ownerlessPartitionInactiveLongEnoughIsRemovedByAnotherOwnersReconciliation() {
    PartitionLifecycler zero = startedPartition(0, true);
    PartitionLifecycler one = startedPartition(1, false);
    clock.set(2_000_000);
    one.changeState(PartitionState.PARTITION_INACTIVE);
    // Killed (no close): the owner entry stays.
    clock.addAndGet(Duration.ofHours(13).toMillis());
    zero.reconcile();
    assertThat(partitions().getPartitionsMap()).as("still owned").containsKey(1);
    kv.cas("ingester-partitions", cur -> PartitionLifecycler.parse(cur).toBuilder().removeOwners("ingester-zone-a-1")
        .build().toByteArray());
    clock.set(2_000_000 + Duration.ofHours(13).toMillis() - 1);
    zero.reconcile();
    assertThat(partitions().getPartitionsMap()).as("INACTIVE 1 ms short of 13h").containsKey(1);
    clock.addAndGet(1);
    zero.reconcile();
    assertThat(partitions().getPartitionsMap()).containsOnlyKeys(0);
    assertThat(partitions().getOwnersMap()).containsOnlyKeys("ingester-zone-a-0");
  }

  @Test
  void everyOwnerOfAnInactivePartitionLeavesOnCloseAndOnlyThen() {
    PartitionLifecycler zoneA = partition("ingester-zone-a-6", 6, Duration.ZERO);
    PartitionLifecycler zoneB = partition("ingester-zone-b-6", 6, Duration.ZERO);
    zoneA.start();
    zoneB.start();
    zoneB.close();
    assertThat(partitions().getOwnersMap()).as("ACTIVE: kept for a restart in place")
        .containsKeys("ingester-zone-a-6", "ingester-zone-b-6");
    PartitionLifecycler zoneBAgain = partition("ingester-zone-b-6", 6, Duration.ZERO);
    zoneBAgain.start();
    zoneA.changeState(PartitionState.PARTITION_INACTIVE);
    zoneBAgain.close(); // asked nothing itself: the partition's state is the same for every zone
    assertThat(partitions().getOwnersMap()).containsKey("ingester-zone-a-6")
        .doesNotContainKey("ingester-zone-b-6");
    zoneA.close();
    assertThat(partitions().getOwnersMap()).doesNotContainKey("ingester-zone-a-6");
  }

  @Test
  void ownerPublishesWhetherItIsReadyToLeaveOnlyWhileInactive() {
    PartitionLifecycler l = partition("ingester-zone-a-7", 7, Duration.ZERO);
    toClose.add(l);
    l.reportReadyToLeave(p -> true);
    l.start();
    l.reconcile();
    assertThat(partitions().getOwnersOrThrow("ingester-zone-a-7").getReadyToLeave()).as("ACTIVE").isFalse();
    l.changeState(PartitionState.PARTITION_INACTIVE);
    l.reconcile(); // sees INACTIVE
    l.reconcile(); // publishes
    assertThat(partitions().getOwnersOrThrow("ingester-zone-a-7").getReadyToLeave()).isTrue();
    l.changeState(PartitionState.PARTITION_ACTIVE);
    l.reconcile();
    l.reconcile();
    assertThat(partitions().getOwnersOrThrow("ingester-zone-a-7").getReadyToLeave()).isFalse();
  }

  @Test
  void leavingOwnerRemovesItselfAndItsLongInactivePartitionOnClose() {
    PartitionLifecycler zero = startedPartition(0, true);
    PartitionLifecycler one = startedPartition(1, false);
    clock.set(2_000_000);
    one.changeState(PartitionState.PARTITION_INACTIVE);
    one.setLeaving(true);
    clock.addAndGet(Duration.ofHours(13).toMillis());
    one.close();
    assertThat(partitions().getPartitionsMap()).containsOnlyKeys(0);
    assertThat(partitions().getOwnersMap()).containsOnlyKeys("ingester-zone-a-0");
  }

  @Test
  void lockedOwnerlessInactivePartitionIsNeverRemoved() {
    PartitionLifecycler zero = startedPartition(0, true);
    PartitionLifecycler one = startedPartition(1, false);
    one.changeState(PartitionState.PARTITION_INACTIVE);
    one.setStateLocked(true);
    one.setLeaving(true);
    clock.addAndGet(Duration.ofDays(30).toMillis());
    one.close();
    zero.reconcile();
    assertThat(partitions().getOwnersMap()).containsOnlyKeys("ingester-zone-a-0");
    assertThat(partitions().getPartitionsOrThrow(1).getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
  }

  @Test
  void leavingOwnerOfARecentlyInactivePartitionRemovesOnlyItself() {
    PartitionLifecycler one = partition("ingester-zone-a-1", 1, Duration.ZERO);
    one.start();
    one.changeState(PartitionState.PARTITION_INACTIVE);
    one.setLeaving(true);
    clock.addAndGet(60_000);
    one.close();
    assertThat(partitions().getOwnersMap()).isEmpty();
    assertThat(partitions().getPartitionsOrThrow(1).getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
  }

  @Test
  void watcherKeepsTheLatestDescriptor() throws Exception {
    RingWatcher<RingDesc> w = new RingWatcher<>("ingester", kv, "ingester", RingDesc.parser(),
        RingDesc.getDefaultInstance(), RingMetrics.noop(), clock::get);
    toClose.add(w);
    await().until(w::connected);
    assertThat(w.current().getInstancesCount()).isZero();
    InstanceLifecycler l = instance("x", true);
    l.start();
    toClose.add(l);
    await().until(() -> w.current().getInstancesMap().containsKey("x"));
  }
}
