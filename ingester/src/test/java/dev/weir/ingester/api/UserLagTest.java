package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.storage.ingest.PartitionFreshness;
import java.util.List;
import org.junit.jupiter.api.Test;

class UserLagTest {
  private static final long NOW = 1_764_780_010_000L;

  @Test
  void jsonIsInThePrometheusApiShapeWithSecondsAndNullsForUnknowns() throws Exception {
    String body = UserLag.json("team-\"a\"", List.of(
        new UserLag.Row(3, "ingester-zone-a-3", new PartitionFreshness(3, 1040, 1043, 3, 1_764_780_000_123L, true),
            120, 1_764_779_999_500L, null),
        new UserLag.Row(5, "", null, -1, -1, "no healthy owner for partition 5")), NOW);
    JsonNode root = new ObjectMapper().enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).readTree(body);
    assertThat(root.get("status").asText()).isEqualTo("success");
    JsonNode data = root.get("data");
    assertThat(data.get("tenant").asText()).isEqualTo("team-\"a\"");
    JsonNode p3 = data.get("partitions").get(0);
    assertThat(p3.get("partition").asInt()).isEqualTo(3);
    assertThat(p3.get("owner").asText()).isEqualTo("ingester-zone-a-3");
    assertThat(p3.get("ready").asBoolean()).isTrue();
    assertThat(p3.get("series").asLong()).isEqualTo(120);
    assertThat(p3.get("consumed_offset").asLong()).isEqualTo(1040);
    assertThat(p3.get("end_offset").asLong()).isEqualTo(1043);
    assertThat(p3.get("records_behind").asLong()).isEqualTo(3);
    assertThat(p3.get("seconds_behind").asDouble()).isEqualTo(9.877);
    assertThat(p3.get("consumed_up_to").decimalValue()).isEqualByComparingTo("1764780000.123");
    assertThat(p3.get("newest_sample_time").asDouble()).isEqualTo(1_764_779_999.5);
    assertThat(p3.has("error")).isFalse();
    JsonNode p5 = data.get("partitions").get(1);
    assertThat(p5.get("ready").asBoolean()).isFalse();
    assertThat(p5.get("records_behind").isNull()).isTrue();
    assertThat(p5.get("seconds_behind").isNull()).isTrue();
    assertThat(p5.get("newest_sample_time").isNull()).isTrue();
    assertThat(p5.get("error").asText()).contains("no healthy owner");
  }
}
