package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class QueryFreshnessTest {
  private static final long NOW = 1_764_780_000_500L;

  private static PartitionFreshness partition(int p, long consumedUpTo, long behind) {
    return new PartitionFreshness(p, 100, 100 + behind, behind, consumedUpTo, true);
  }

  @Test
  void headerCarriesTheOldestConsumedUpToInUnixSeconds() {
    QueryFreshness.Verdict v = QueryFreshness.headerOnly(() -> NOW)
        .check(List.of(partition(0, NOW - 200, 0), partition(1, 1_764_779_990_007L, 12)));
    assertThat(v.headers()).containsEntry(QueryFreshness.HEADER, "1764779990.007");
    assertThat(v.warnings()).as("no max lag: no warning").isEmpty();
  }

  @Test
  void noHeaderWithoutPartitionsOrWhenOneIsUnknown() {
    QueryFreshness f = QueryFreshness.headerOnly(() -> NOW);
    assertThat(f.check(List.of()).headers()).isEmpty();
    assertThat(f.check(List.of(partition(0, NOW, 0), partition(1, -1, -1))).headers()).isEmpty();
  }

  @Test
  void warnsForEachPartitionLaggingMoreThanTheMaximum() {
    QueryFreshness f = new QueryFreshness(Duration.ofSeconds(5), false, () -> NOW);
    QueryFreshness.Verdict v = f.check(List.of(partition(0, NOW - 4_000, 0), partition(7, NOW - 6_500, 42),
        partition(9, -1, -1)));
    assertThat(v.warnings()).hasSize(2);
    assertThat(v.warnings().get(0)).contains("partition 7").contains("6.500s").contains("42 records behind")
        .contains("--querier.max-partition-lag=5s");
    assertThat(v.warnings().get(1)).contains("partition 9").contains("not known");
  }

  @Test
  void failsInsteadWhenAsked() {
    QueryFreshness f = new QueryFreshness(Duration.ofSeconds(5), true, () -> NOW);
    assertThat(f.check(List.of(partition(0, NOW - 1_000, 0))).warnings()).isEmpty();
    assertThatThrownBy(() -> f.check(List.of(partition(0, NOW - 1_000, 0), partition(3, NOW - 60_000, 9))))
        .isInstanceOf(ServerErrorException.class).hasMessageContaining("partition 3")
        .hasMessageContaining("--querier.fail-on-high-partition-lag");
  }
}
