package dev.weir.ingester.ring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.OwnerState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionRing;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RingPagesTest {
  static final ObjectMapper JSON = new ObjectMapper();

  private static PartitionRing ring() {
    return new PartitionRing(PartitionRingDesc.newBuilder()
        .putPartitions(0, PartitionDesc.newBuilder().setId(0).setState(PartitionState.PARTITION_ACTIVE)
            .setStateTimestamp(1_000).addTokens(5).build())
        .putPartitions(1, PartitionDesc.newBuilder().setId(1).setState(PartitionState.PARTITION_INACTIVE)
            .setStateTimestamp(2_000).addTokens(1 << 30).build())
        .putOwners("ingester-zone-a-0", OwnerDesc.newBuilder().setOwnedPartition(0)
            .setState(OwnerState.OWNER_ACTIVE).build())
        .putOwners("ingester-zone-a-1", OwnerDesc.newBuilder().setOwnedPartition(1)
            .setState(OwnerState.OWNER_ACTIVE).setReadyToLeave(true).build())
        .build());
  }

  /** Partition 0's lag is known (42 records), partition 1's is not. */
  private static final RingPages.PartitionLag LAG = p -> Map.of(0, 42L).getOrDefault(p, -1L);

  @Test
  void jsonShowsEveryPartitionsLagAndMinusOneWhenUnknown() throws Exception {
    JsonNode page = JSON.readTree(RingPages.partitionsJson(ring(), true, LAG));
    assertThat(page.get("partitions").get(0).get("lag_records").asLong()).isEqualTo(42);
    assertThat(page.get("partitions").get(1).get("lag_records").asLong()).isEqualTo(-1);
    assertThat(page.get("partitions").get(1).get("state").asText()).isEqualTo("INACTIVE");
    assertThat(page.get("owners").get("ingester-zone-a-1").get("ready_to_leave").asBoolean()).isTrue();
    assertThat(page.get("owners").get("ingester-zone-a-0").get("ready_to_leave").asBoolean()).isFalse();
  }

  @Test
  void htmlShowsTheLagOrADashWhenUnknown() {
    String html = RingPages.partitionsHtml(ring(), true, LAG);
    assertThat(html).contains("<td>ingester-zone-a-0</td><td>42</td></tr>")
        .contains("<td>ingester-zone-a-1</td><td>-</td></tr>");
  }
}
