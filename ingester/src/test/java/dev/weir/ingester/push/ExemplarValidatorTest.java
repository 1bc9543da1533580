package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.head.Exemplar;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireSeries.WireExemplar;
import org.junit.jupiter.api.Test;

class ExemplarValidatorTest {
  private static final Labels SERIES = Labels.of("__name__", "req_total", "job", "api");

  private static Exemplar check(long t, String... pairs) {
    return ExemplarValidator.check(new WireExemplar(pairs, 1.5, t), SERIES, 100, 10_000);
  }

  private static void refused(String reason, long t, String... pairs) {
    assertThatThrownBy(() -> check(t, pairs)).isInstanceOf(ClientErrorException.class)
        .satisfies(e -> assertThat(((ClientErrorException) e).reason()).isEqualTo(reason))
        .hasMessageContaining("req_total");
  }

  @Test
  void aValidExemplarGetsSortedLabels() {
    Exemplar e = check(500, "trace_id", "abc", "span_id", "d");
    assertThat(e.labels()).isEqualTo(Labels.of("span_id", "d", "trace_id", "abc"));
    assertThat(e.value()).isEqualTo(1.5);
    assertThat(e.timestamp()).isEqualTo(500);
  }

  @Test
  void labelsOfExactly128RunesPassAndOneMoreIsTooLong() {
    String v120 = "é".repeat(120); // 2 bytes each: runes, not bytes, are counted
    check(500, "trace_id", v120);
    refused("exemplar_labels_too_long", 500, "trace_id", v120 + "x");
  }

  @Test
  void eachMimirReasonIsReported() {
    refused("exemplar_labels_missing", 500);
    refused("exemplar_labels_blank", 500, "trace_id", "");
    refused("exemplar_labels_blank", 500, "", "x");
    refused("exemplar_missing_timestamp", 0, "trace_id", "a");
    refused("exemplar_too_old", 99, "trace_id", "a");
    refused("exemplar_too_far_in_future", 10_001, "trace_id", "a");
    refused("exemplar_duplicate_label_names", 500, "a", "1", "a", "2");
  }
}
