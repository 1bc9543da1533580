package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionRing;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SeriesLimitTest {
  static Limits limits(int maxSeries, int shardSize) {
    return new Limits(30, 1024, 2048, Duration.ofMinutes(10), maxSeries, 0, 200_000, Duration.ZERO, shardSize);
  }

  /** {@code active} ACTIVE partitions and one INACTIVE (tokens do not matter for the count). */
  static PartitionRing ring(int active) {
    PartitionRingDesc.Builder b = PartitionRingDesc.newBuilder();
    for (int p = 0; p <= active; p++) {
      b.putPartitions(p, PartitionDesc.newBuilder().setId(p).addTokens(p * 1000)
          .setState(p < active ? PartitionState.PARTITION_ACTIVE : PartitionState.PARTITION_INACTIVE).build());
    }
    return new PartitionRing(b.build());
  }

  @Test
  void theGlobalLimitIsSharedByTheTenantsPartitions() {
    assertThat(SeriesLimit.perPartition(limits(1000, 0), ring(4))).as("all 4 ACTIVE, not the INACTIVE one")
        .isEqualTo(250);
    assertThat(SeriesLimit.perPartition(limits(1000, 2), ring(4))).as("a shard of 2").isEqualTo(500);
    assertThat(SeriesLimit.perPartition(limits(1000, 9), ring(4))).as("a shard larger than the ring").isEqualTo(250);
    assertThat(SeriesLimit.perPartition(limits(1000, 3), ring(4))).as("rounded down").isEqualTo(333);
  }

  @Test
  void unlimitedStaysUnlimitedAndAShareIsNeverZero() {
    assertThat(SeriesLimit.perPartition(limits(0, 2), ring(4))).isZero();
    assertThat(SeriesLimit.perPartition(limits(3, 0), ring(8))).isEqualTo(1);
    assertThat(SeriesLimit.perPartition(limits(1000, 0), null)).as("ring not known yet").isEqualTo(1000);
    assertThat(SeriesLimit.perPartition(limits(1000, 0), ring(0))).as("no ACTIVE partition").isEqualTo(1000);
  }
}
