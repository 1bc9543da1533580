package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PartitionLagsTest {
  @Test
  void lagIsTheSlowestOwnersAndUnknownWithoutAnyCommit() {
    Map<Integer, Long> lags = PartitionLags.lags(Map.of(0, 100L, 1, 50L, 2, 7L),
        Map.of(0, List.of("ingester-zone-a-0", "ingester-zone-b-0"), 1, List.of("ingester-zone-a-1"),
            2, List.of("ingester-zone-a-2")),
        Map.of("ingester-zone-a-0", Map.of(0, 90L), "ingester-zone-b-0", Map.of(0, 60L),
            "ingester-zone-a-1", Map.of(0, 3L)));
    assertThat(lags).containsExactlyInAnyOrderEntriesOf(Map.of(0, 40L));
  }

  @Test
  void anOwnerWithoutCommitDoesNotHideAnotherZonesLagAndLagIsNeverNegative() {
    Map<Integer, Long> lags = PartitionLags.lags(Map.of(0, 10L),
        Map.of(0, List.of("a", "b")), Map.of("b", Map.of(0, 12L)));
    assertThat(lags).containsExactlyInAnyOrderEntriesOf(Map.of(0, 0L));
  }
}
