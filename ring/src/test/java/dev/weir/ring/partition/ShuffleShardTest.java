package dev.weir.ring.partition;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.SeriesHash;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class ShuffleShardTest {

  @Test
  void sameTenantAndRingGiveTheSamePartitionsInAnyView() {
    PartitionRing ring = PartitionRingTest.ring(12);
    PartitionRing rebuilt = new PartitionRing(PartitionRingDesc.newBuilder(ring.desc()).build());
    for (int t = 0; t < 200; t++) {
      String tenant = "tenant-" + t;
      assertThat(rebuilt.shuffleShard(tenant, 4).activePartitions())
          .isEqualTo(ring.shuffleShard(tenant, 4).activePartitions())
          .isEqualTo(ShuffleShard.select(ring.desc(), tenant, 4).stream().toList());
    }
    // Pinned (printf tenant-a | sha256sum, first 8 bytes): a different seed reshuffles every tenant.
    assertThat(ShuffleShard.seed("tenant-a")).isEqualTo(ShuffleShard.seed(new String("tenant-a".toCharArray())))
        .isEqualTo(0x80a707af7dc77ee1L);
  }

  @Test
  void shardHoldsExactlyTheAskedNumberOfActivePartitions() {
    PartitionRing ring = PartitionRingTest.ring(8);
    for (int size = 1; size < 8; size++) {
      for (int t = 0; t < 50; t++) {
        PartitionRing shard = ring.shuffleShard("tenant-" + t, size);
        assertThat(shard.activePartitions()).hasSize(size);
        assertThat(ring.activePartitions()).containsAll(shard.activePartitions());
        assertThat(shard.partitions().keySet()).isEqualTo(new TreeSet<>(shard.activePartitions()));
        for (int p : shard.activePartitions()) {
          assertThat(shard.owners(p)).containsExactly("ingester-zone-a-" + p);
        }
      }
    }
  }

  @Test
  void sizeZeroOrAtLeastThePartitionCountMeansEveryActivePartition() {
    PartitionRing ring = PartitionRingTest.ring(5);
    assertThat(ring.shuffleShardSize(0)).isEqualTo(5);
    assertThat(ring.shuffleShardSize(5)).isEqualTo(5);
    assertThat(ring.shuffleShardSize(9)).isEqualTo(5);
    assertThat(ring.shuffleShardSize(2)).isEqualTo(2);
    assertThat(ring.shuffleShard("t", 0)).isSameAs(ring);
    assertThat(ring.shuffleShard("t", 9)).isSameAs(ring);
    assertThat(ring.shuffleShard("t", 5).activePartitions()).containsExactly(0, 1, 2, 3, 4);
    assertThat(ShuffleShard.select(ring.desc(), "t", 9)).as("a walk asked for more stops at what exists")
        .containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void addingAPartitionMovesAtMostOnePartitionOfAFewTenants() {
    PartitionRing before = PartitionRingTest.ring(10);
    PartitionRing after = withNewPartition(before, 10, PartitionState.PARTITION_ACTIVE);
    int moved = 0;
    int tenants = 2000;
    for (int t = 0; t < tenants; t++) {
      String tenant = "tenant-" + t;
      Set<Integer> old = new HashSet<>(before.shuffleShard(tenant, 3).activePartitions());
      Set<Integer> now = new HashSet<>(after.shuffleShard(tenant, 3).activePartitions());
      if (old.equals(now)) {
        continue;
      }
      moved++;
      Set<Integer> gone = new HashSet<>(old);
      gone.removeAll(now);
      Set<Integer> added = new HashSet<>(now);
      added.removeAll(old);
      assertThat(added).as("tenant %s: %s -> %s", tenant, old, now).containsExactly(10);
      assertThat(gone).as("tenant %s: %s -> %s", tenant, old, now).hasSize(1);
    }
    // The new partition should take about its fair share of the shards: 3 of 11 on average.
    assertThat(moved / (double) tenants).as("%d of %d tenants moved", moved, tenants).isBetween(0.15, 0.40);

    PartitionRing pending = withNewPartition(before, 10, PartitionState.PARTITION_PENDING);
    for (int t = 0; t < 200; t++) {
      assertThat(pending.shuffleShard("tenant-" + t, 3).activePartitions()).as("a PENDING partition changes nothing")
          .isEqualTo(before.shuffleShard("tenant-" + t, 3).activePartitions());
    }
  }

  @Test
  void inactivePartitionsAreNeverChosen() {
    PartitionRing full = PartitionRingTest.ring(6);
    PartitionRingDesc.Builder b = full.desc().toBuilder();
    b.putPartitions(2, b.getPartitionsOrThrow(2).toBuilder().setState(PartitionState.PARTITION_INACTIVE).build());
    PartitionRing ring = new PartitionRing(b.build());
    for (int t = 0; t < 300; t++) {
      List<Integer> shard = ring.shuffleShard("tenant-" + t, 3).activePartitions();
      assertThat(shard).hasSize(3).doesNotContain(2);
    }
  }

  @Test
  void seriesOfATenantGoOnlyToItsShardAndSpreadOverIt() {
    PartitionRing ring = PartitionRingTest.ring(16);
    PartitionRing shard = ring.shuffleShard("noisy", 4);
    Map<Integer, Integer> counts = new HashMap<>();
    for (int i = 0; i < 40_000; i++) {
      counts.merge(shard.partitionFor(SeriesHash.of("noisy", new String[] {"__name__", "m", "i", "" + i})), 1,
          Integer::sum);
    }
    assertThat(counts.keySet()).isEqualTo(new TreeSet<>(shard.activePartitions()));
    for (int c : counts.values()) {
      assertThat(c).as("series per shard partition %s", counts).isBetween(10_000 * 6 / 10, 10_000 * 14 / 10);
    }
    Set<List<Integer>> distinct = new HashSet<>();
    int[] used = new int[16];
    for (int t = 0; t < 1000; t++) {
      List<Integer> s = ring.shuffleShard("tenant-" + t, 4).activePartitions();
      distinct.add(s);
      s.forEach(p -> used[p]++);
    }
    assertThat(distinct.size()).as("tenants get different shards").isGreaterThan(500);
    assertThat(Arrays.stream(used).min().orElseThrow()).as("every partition serves some tenants: %s",
        Arrays.toString(used)).isGreaterThan(150);
  }

  static PartitionRing withNewPartition(PartitionRing ring, int id, PartitionState state) {
    Map<Integer, int[]> tokens = new HashMap<>();
    ring.partitions().forEach((p, d) -> tokens.put(p, d.getTokensList().stream().mapToInt(Integer::intValue).toArray()));
    int[] t = PartitionTokens.forNewPartition(tokens, PartitionRingTest.TOKENS);
    return new PartitionRing(ring.desc().toBuilder()
        .putPartitions(id, PartitionDesc.newBuilder().setId(id).setState(state)
            .addAllTokens(Arrays.stream(t).boxed().toList()).build())
        .putOwners("ingester-zone-a-" + id, OwnerDesc.newBuilder().setOwnedPartition(id).build()).build());
  }
}
