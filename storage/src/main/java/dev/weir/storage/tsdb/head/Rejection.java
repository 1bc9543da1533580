package dev.weir.storage.tsdb.head;

/** A sample the head refused, with the reason. */
public record Rejection(MemSeries series, long timestamp, double value, RejectReason reason) {
  public String message() {
    return reason.description()
        + " (timestamp="
        + timestamp
        + ", value="
        + value
        + ") for series "
        + series.labels();
  }
}
