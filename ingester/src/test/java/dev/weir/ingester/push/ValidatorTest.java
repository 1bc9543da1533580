package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Labels;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ValidatorTest {
  private final Limits limits = new Limits(4, 10, 12, Duration.ofMinutes(10), 0);

  static TimeSeries series(String... pairs) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    for (int i = 0; i < pairs.length; i += 2) {
      b.addLabels(Label.newBuilder().setName(pairs[i]).setValue(pairs[i + 1]));
    }
    return b.build();
  }

  private void assertRejected(TimeSeries ts, String reason, String messagePart) {
    assertThatThrownBy(() -> Validator.labels(ts, limits))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> {
          assertThat(e.reason()).isEqualTo(reason);
          assertThat(e.httpStatus()).isEqualTo(400);
        })
        .hasMessageContaining(messagePart)
        .hasMessageContaining("series: '");
  }

  @Test
  void sortsUnsortedLabelsInsteadOfRejecting() {
    Labels l = Validator.labels(series("job", "a", "__name__", "up", "az", "1"), limits);
    assertThat(l.names()).containsExactly("__name__", "az", "job");
  }

  @Test
  void rejectsEachInvalidShapeWithItsReason() {
    assertRejected(series("job", "a"), "missing_metric_name", "without a metric name");
    assertRejected(series("__name__", "1up"), "metric_name_invalid", "'1up'");
    assertRejected(series("__name__", "up", "a", "1", "b", "1", "c", "1", "d", "1"),
        "max_label_names_per_series", "actual: 5, limit: 4");
    assertRejected(series("__name__", "up", "a", "1", "a", "2"), "duplicate_label_names", "label: 'a'");
    assertRejected(series("__name__", "up", "a-b", "1"), "label_invalid", "invalid label name: 'a-b'");
    assertRejected(series("__name__", "up", "", "1"), "label_invalid", "invalid label name: ''");
    assertRejected(series("__name__", "up", "abcdefghijk", "1"), "label_name_too_long", "actual: 11, limit: 10");
    assertRejected(series("__name__", "up", "a", ""), "label_value_invalid", "empty value for label 'a'");
    assertRejected(series("__name__", "up", "a", "0123456789abc"), "label_value_too_long",
        "actual: 13, limit: 12");
  }

  @Test
  void errorMessageNamesTheSeries() {
    assertThatThrownBy(() -> Validator.labels(series("__name__", "up", "a-b", "1"), limits))
        .hasMessageEndingWith("series: 'up{a-b=\"1\"}'");
  }
}
