package dev.weir.ingester.push;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.head.Exemplar;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireSeries.WireExemplar;

/**
 * Checks one exemplar as Mimir's distributor does, with its reasons: labels present
 * ({@code exemplar_labels_missing}), no blank name or value ({@code exemplar_labels_blank}), at
 * most {@value #MAX_LABEL_RUNES} runes of names and values together, OpenMetrics' bound
 * ({@code exemplar_labels_too_long}), a timestamp ({@code exemplar_missing_timestamp}), not
 * older than the head accepts ({@code exemplar_too_old}) nor too far in the future
 * ({@code exemplar_too_far_in_future}). Stateless.
 */
public final class ExemplarValidator {
  static final int MAX_LABEL_RUNES = 128;

  private ExemplarValidator() {}

  /**
   * The exemplar with sorted labels.
   *
   * @throws ClientErrorException naming the reason, the exemplar and the series
   */
  public static Exemplar check(WireExemplar e, Labels series, long minTime, long maxTime) {
    String[] pairs = e.pairs();
    if (pairs.length == 0) {
      throw error("exemplar_labels_missing", "received an exemplar with no valid labels", e, series);
    }
    int runes = 0;
    for (String s : pairs) {
      if (s.isEmpty()) {
        throw error("exemplar_labels_blank", "received an exemplar where a label name or value is blank", e, series);
      }
      runes += s.codePointCount(0, s.length());
    }
    if (runes > MAX_LABEL_RUNES) {
      throw error("exemplar_labels_too_long", "received an exemplar where the combined set size of names and values"
          + " exceeds " + MAX_LABEL_RUNES + " runes (" + runes + ")", e, series);
    }
    if (e.timestamp() == 0) {
      throw error("exemplar_missing_timestamp", "received an exemplar with no timestamp", e, series);
    }
    if (e.timestamp() < minTime) {
      throw error("exemplar_too_old", "received an exemplar whose timestamp " + e.timestamp()
          + " is older than the head accepts (" + minTime + ")", e, series);
    }
    if (e.timestamp() > maxTime) {
      throw error("exemplar_too_far_in_future", "received an exemplar whose timestamp " + e.timestamp()
          + " is too far in the future", e, series);
    }
    String[] sorted = pairs.clone();
    Labels.sortPairs(sorted);
    for (int i = 2; i < sorted.length; i += 2) {
      if (sorted[i].equals(sorted[i - 2])) {
        throw error("exemplar_duplicate_label_names", "received an exemplar with a repeated label name", e, series);
      }
    }
    return new Exemplar(Labels.ofSortedPairs(sorted), e.value(), e.timestamp());
  }

  /** A protobuf exemplar in the form {@link #check} takes. */
  public static WireExemplar of(dev.weir.proto.prompb.Exemplar e) {
    String[] pairs = new String[2 * e.getLabelsCount()];
    for (int i = 0; i < e.getLabelsCount(); i++) {
      pairs[2 * i] = e.getLabels(i).getName();
      pairs[2 * i + 1] = e.getLabels(i).getValue();
    }
    return new WireExemplar(pairs, e.getValue(), e.getTimestamp());
  }

  private static ClientErrorException error(String reason, String what, WireExemplar e, Labels series) {
    StringBuilder l = new StringBuilder("{");
    String[] p = e.pairs();
    for (int i = 0; i + 1 < p.length; i += 2) {
      l.append(i > 0 ? ", " : "").append(p[i]).append("=\"").append(p[i + 1]).append('"');
    }
    return new ClientErrorException(reason, what + ", exemplar: " + l.append('}') + " timestamp: " + e.timestamp()
        + ", series: '" + Validator.seriesText(series) + "'");
  }
}
