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
    return reason.description()
        + " (timestamp="
        + timestamp
        + (histogram ? ", histogram count=" : ", value=")
        + value
        + ") for series "
        + series.labels();
  }
}
