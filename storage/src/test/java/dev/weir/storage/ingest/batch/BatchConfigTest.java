package dev.weir.storage.ingest.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchConfigTest {
  @Test
  void theDefaultsBoundTheBytesAndRecordsOfACycle() {
    BatchConfig d = BatchConfig.defaults("x:9092", "t", "g", List.of(0));
    assertThat(d.maxBytesPerCycle()).isEqualTo(BatchConfig.DEFAULT_MAX_BYTES_PER_CYCLE).isEqualTo(256L << 20);
    assertThat(d.maxRecordsPerCycle()).isEqualTo(BatchConfig.DEFAULT_MAX_RECORDS_PER_CYCLE).isPositive();
  }

  @Test
  void negativeBoundsAreRejected() {
    BatchConfig d = BatchConfig.defaults("x:9092", "t", "g", List.of(0));
    assertThatThrownBy(() -> d.withLimits(0, -1, Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("per cycle");
  }
}
