package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class QueryPlanTest {
  static final long H = Duration.ofHours(1).toMillis();
  static final long NOW = 1_000 * H;
  static final Duration WITHIN = Duration.ofHours(13);
  static final Duration STORE_AFTER = Duration.ofHours(12);

  @Test
  void aRecentRangeGoesToIngestersOnly() {
    QueryPlan p = QueryPlan.of(NOW - 2 * H, NOW, NOW, WITHIN, STORE_AFTER);
    assertThat(p.ingesters()).isEqualTo(new QueryPlan.Range(NOW - 2 * H, NOW));
    assertThat(p.stores()).isNull();
  }

  @Test
  void anOldRangeGoesToStoreGatewaysOnly() {
    QueryPlan p = QueryPlan.of(NOW - 48 * H, NOW - 24 * H, NOW, WITHIN, STORE_AFTER);
    assertThat(p.ingesters()).isNull();
    assertThat(p.stores()).isEqualTo(new QueryPlan.Range(NOW - 48 * H, NOW - 24 * H));
  }

  @Test
  void aLongRangeIsCutToEachKindsWindowAndTheWindowsOverlap() {
    QueryPlan p = QueryPlan.of(NOW - 48 * H, NOW, NOW, WITHIN, STORE_AFTER);
    assertThat(p.ingesters()).isEqualTo(new QueryPlan.Range(NOW - 13 * H, NOW));
    assertThat(p.stores()).isEqualTo(new QueryPlan.Range(NOW - 48 * H, NOW - 12 * H));
  }

  @Test
  void zeroSendsTheWholeRangeToThatKind() {
    QueryPlan p = QueryPlan.of(Long.MIN_VALUE, Long.MAX_VALUE, NOW, Duration.ZERO, Duration.ZERO);
    assertThat(p.ingesters()).isEqualTo(new QueryPlan.Range(Long.MIN_VALUE, Long.MAX_VALUE));
    assertThat(p.stores()).isEqualTo(new QueryPlan.Range(Long.MIN_VALUE, Long.MAX_VALUE));
  }

  @Test
  void unboundedRangesDoNotOverflow() {
    QueryPlan p = QueryPlan.of(Long.MIN_VALUE, Long.MAX_VALUE, NOW, WITHIN, STORE_AFTER);
    assertThat(p.ingesters()).isEqualTo(new QueryPlan.Range(NOW - 13 * H, Long.MAX_VALUE));
    assertThat(p.stores()).isEqualTo(new QueryPlan.Range(Long.MIN_VALUE, NOW - 12 * H));
  }
}
