package dev.weir.ingester.push;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Labels;

/**
 * Checks the labels of an incoming series and returns them sorted. Every failure is a
 * {@link ClientErrorException} whose reason is Mimir's discarded-samples reason and whose message
 * names the series. Labels out of order are sorted rather than refused: Prometheus always sends
 * them sorted, and other senders gain nothing from a rejection.
 *
 * <p>Stateless and thread-safe.
 */
public final class Validator {
  /** Longest series text quoted in an error message. */
  private static final int MAX_SERIES_TEXT = 200;

  private Validator() {}

  /** Validated, sorted labels of a series. */
  public static Labels labels(TimeSeries ts, Limits limits) {
    int n = ts.getLabelsCount();
    String[] pairs = new String[n * 2];
    for (int i = 0; i < n; i++) {
      Label l = ts.getLabels(i);
      pairs[2 * i] = l.getName();
      pairs[2 * i + 1] = l.getValue();
    }
    return labels(pairs, limits);
  }

  /** Validated, sorted labels from an interleaved name/value array in any order (sorted in place, taken over). */
  public static Labels labels(String[] pairs, Limits limits) {
    int n = pairs.length / 2;
    Labels.sortPairs(pairs);
    Labels labels = Labels.ofSortedPairs(pairs);
    String metric = labels.get(Labels.METRIC_NAME);
    if (metric == null) {
      throw error("missing_metric_name", "received a series without a metric name", labels);
    }
    if (!isValidMetricName(metric)) {
      throw error("metric_name_invalid", "received a series with an invalid metric name: '"
          + truncate(metric) + "'", labels);
    }
    if (n > limits.maxLabelNamesPerSeries()) {
      throw error("max_label_names_per_series", "received a series whose number of labels exceeds the limit"
          + " (actual: " + n + ", limit: " + limits.maxLabelNamesPerSeries() + ")", labels);
    }
    for (int i = 0; i < n; i++) {
      String name = pairs[2 * i];
      String value = pairs[2 * i + 1];
      if (i > 0 && name.equals(pairs[2 * i - 2])) {
        throw error("duplicate_label_names", "received a series with duplicate label name, label: '"
            + truncate(name) + "'", labels);
      }
      if (name.length() > limits.maxLabelNameLength()) {
        throw error("label_name_too_long", "received a series whose label name length exceeds the limit"
            + " (actual: " + name.length() + ", limit: " + limits.maxLabelNameLength() + "), label: '"
            + truncate(name) + "'", labels);
      }
      if (!isValidLabelName(name)) {
        throw error("label_invalid", "received a series with an invalid label name: '"
            + truncate(name) + "'", labels);
      }
      if (value.isEmpty()) {
        throw error("label_value_invalid", "received a series with an empty value for label '"
            + name + "'", labels);
      }
      if (value.length() > limits.maxLabelValueLength()) {
        throw error("label_value_too_long", "received a series whose label value length exceeds the limit"
            + " (actual: " + value.length() + ", limit: " + limits.maxLabelValueLength() + "), label: '"
            + name + "', value: '" + truncate(value) + "'", labels);
      }
    }
    return labels;
  }

  /** Prometheus' legacy metric name rule: {@code [a-zA-Z_:][a-zA-Z0-9_:]*}. */
  public static boolean isValidMetricName(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
          || (i > 0 && c >= '0' && c <= '9');
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /** Prometheus' legacy label name rule: {@code [a-zA-Z_][a-zA-Z0-9_]*}. */
  public static boolean isValidLabelName(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
          || (i > 0 && c >= '0' && c <= '9');
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  static ClientErrorException error(String reason, String message, Labels series) {
    return new ClientErrorException(reason, message + ", series: '" + seriesText(series) + "'");
  }

  static String seriesText(Labels series) {
    return truncate(series.toString());
  }

  private static String truncate(String s) {
    return s.length() <= MAX_SERIES_TEXT ? s : s.substring(0, MAX_SERIES_TEXT) + "…(truncated)";
  }
}
