package dev.weir.storage.tsdb.head;

/**
 * A sample the head refused, with the reason; {@code histogram} when it was a native histogram
 * sample ({@code value} is then its count).
 */
public record Rejection(MemSeries series, long timestamp, double value, RejectReason reason, boolean histogram) {
  /** A refused float sample. */
  public Rejection(MemSeries series, long timestamp, double value, RejectReason reason) {
    this(series, timestamp, value, reason, false);
  }

  public String message() {
    return message(reason, timestamp, value, histogram, series.labels());
  }

  /** The message of a refused sample of the series {@code labels} (any object printing them). */
  public static String message(RejectReason reason, long timestamp, double value, boolean histogram, Object labels) {
    return reason.description()
        + " (timestamp="
        + timestamp
        + (histogram ? ", histogram count=" : ", value=")
        + value
        + ") for series "
        + labels;
  }
}
