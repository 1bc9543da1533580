package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Fetch sizes: an eighth of the pipeline's bound in records, ÷ 8 in stored batches when the writer compresses. */
class AssignedConsumersTest {
  @Test
  void theAllowanceFollowsTheWritersCodec() {
    KafkaConfig c = KafkaConfig.defaults("localhost:9092", "t", "g");
    assertThat(AssignedConsumers.compressionAllowance(c)).as("lz4 by default").isEqualTo(8);
    assertThat(AssignedConsumers.compressionAllowance(c.withProducerCompression("zstd"))).isEqualTo(8);
    assertThat(AssignedConsumers.compressionAllowance(c.withProducerCompression("none"))).isEqualTo(1);
    assertThat(AssignedConsumers.fetchBytesFor("none")).as("the block-builder's, uncompressed").isEqualTo(8 << 20);
    assertThat(AssignedConsumers.fetchBytesFor("lz4")).isEqualTo(1 << 20);
  }

  @Test
  void fetchSizesAreAnEighthOfTheBoundDividedByTheAllowanceBetweenOneAndEightMiB() {
    assertThat(AssignedConsumers.partitionFetchBytes(100L << 20, 1)).as("12.5 MiB capped").isEqualTo(8 << 20);
    assertThat(AssignedConsumers.partitionFetchBytes(100L << 20, 8)).isEqualTo((int) ((100L << 20) / 64));
    assertThat(AssignedConsumers.partitionFetchBytes(16L << 20, 1)).isEqualTo(2 << 20);
    assertThat(AssignedConsumers.partitionFetchBytes(16L << 20, 8)).as("at least 1 MiB").isEqualTo(1 << 20);
  }

  @Test
  void aFetchersFetchIsItsWindowDividedByTheAllowanceAtLeast64KiB() {
    assertThat(AssignedConsumers.fetcherFetchBytes(6 << 20, 8)).isEqualTo((6 << 20) / 8);
    assertThat(AssignedConsumers.fetcherFetchBytes(6 << 20, 1)).isEqualTo(6 << 20);
    assertThat(AssignedConsumers.fetcherFetchBytes(256 << 10, 8)).isEqualTo(64 << 10);
  }
}
