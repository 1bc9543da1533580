package dev.weir.ring.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.SeriesHash;
import dev.weir.ring.Tokens;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PartitionRingTest {
  static final int TOKENS = 128;

  @Test
  void partitionIsTheTrailingNumberOfTheId() {
    assertThat(PartitionIds.fromInstanceId("ingester-zone-b-12")).isEqualTo(12);
    assertThat(PartitionIds.fromInstanceId("ingester-zone-a-0")).isZero();
    assertThat(PartitionIds.fromInstanceId("ingester7")).isEqualTo(7);
    assertThat(PartitionIds.fromInstanceId("42")).isEqualTo(42);
    assertThatThrownBy(() -> PartitionIds.fromInstanceId("ingester-zone-a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"ingester-zone-a\" does not end with a number")
        .hasMessageContaining("--ingester.id");
    assertThatThrownBy(() -> PartitionIds.fromInstanceId("ingester-99999999999")).hasMessageContaining("too large");
  }

  @Test
  void ownerIsTheFirstTokenAtOrAfterTheHashWrappingAround() {
    int[] sorted = Tokens.sortUnsigned(new int[] {100, 200, -5});
    assertThat(sorted).containsExactly(100, 200, -5); // -5 is 2^32-5: the largest unsigned
    assertThat(Tokens.ownerIndex(sorted, 50)).isZero();
    assertThat(Tokens.ownerIndex(sorted, 100)).isZero();
    assertThat(Tokens.ownerIndex(sorted, 101)).isEqualTo(1);
    assertThat(Tokens.ownerIndex(sorted, -6)).isEqualTo(2);
    assertThat(Tokens.ownerIndex(sorted, -1)).as("past the last token wraps to the first").isZero();
    assertThat(Arrays.stream(Tokens.ownedFractions(sorted)).sum()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
  }

  /** A ring of {@code n} ACTIVE partitions created one after another, as ingesters join. */
  static PartitionRing ring(int n) {
    Map<Integer, int[]> tokens = new HashMap<>();
    PartitionRingDesc.Builder b = PartitionRingDesc.newBuilder();
    for (int p = 0; p < n; p++) {
      int[] t = PartitionTokens.forNewPartition(tokens, TOKENS);
      assertThat(t).hasSize(TOKENS);
      tokens.put(p, t);
      b.putPartitions(p, PartitionDesc.newBuilder().setId(p).setState(PartitionState.PARTITION_ACTIVE)
          .addAllTokens(Arrays.stream(t).boxed().toList()).build());
      b.putOwners("ingester-zone-a-" + p, OwnerDesc.newBuilder().setOwnedPartition(p).build());
    }
    return new PartitionRing(b.build());
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 12, 16, 32})
  void millionSeriesSpreadWithinFivePercentOfEven(int partitions) {
    PartitionRing ring = ring(partitions);
    int[] counts = new int[partitions];
    int n = 1_000_000;
    for (int i = 0; i < n; i++) {
      String[] labels = {"__name__", "http_requests_total", "instance", "10.0." + (i >> 8 & 255) + "." + (i & 255),
          "pod", "api-" + i, "status", String.valueOf(200 + i % 5)};
      counts[ring.partitionFor(SeriesHash.of("tenant-" + (i % 3), labels))]++;
    }
    double even = n / (double) partitions;
    for (int p = 0; p < partitions; p++) {
      assertThat(counts[p] / even).as("partition %d of %d: %d series", p, partitions, counts[p])
          .isBetween(0.95, 1.05);
      assertThat(ring.ownership(p) * partitions).as("token ownership of partition %d", p).isBetween(0.97, 1.03);
    }
  }

  @Test
  void onlyActivePartitionsReceiveSeries() {
    PartitionRing full = ring(3);
    PartitionRingDesc.Builder b = full.desc().toBuilder();
    b.putPartitions(1, b.getPartitionsOrThrow(1).toBuilder().setState(PartitionState.PARTITION_PENDING).build());
    PartitionRing ring = new PartitionRing(b.build());
    assertThat(ring.activePartitions()).containsExactly(0, 2);
    for (int i = 0; i < 10_000; i++) {
      assertThat(ring.partitionFor(SeriesHash.of("t", new String[] {"a", String.valueOf(i)}))).isIn(0, 2);
    }
    assertThat(ring.owners(1)).containsExactly("ingester-zone-a-1");
    assertThatThrownBy(() -> new PartitionRing(PartitionRingDesc.getDefaultInstance()).partitionFor(1))
        .hasMessageContaining("no ACTIVE partition");
  }

  @Test
  void seriesHashIsStableAndSeparatesFields() {
    assertThat(SeriesHash.of("t", new String[] {"__name__", "up"}))
        .isEqualTo(SeriesHash.of("t", new String[] {"__name__", "up"}));
    assertThat(SeriesHash.of("t", new String[] {"ab", "c"})).isNotEqualTo(SeriesHash.of("t", new String[] {"a", "bc"}));
    assertThat(SeriesHash.of("t1", new String[] {"a", "b"})).isNotEqualTo(SeriesHash.of("t2", new String[] {"a", "b"}));
    // Pinned value: changing the hash silently moves every series to another partition.
    assertThat(SeriesHash.of("tenant", new String[] {"__name__", "up", "job", "api"})).isEqualTo(-266949974);
  }
}
