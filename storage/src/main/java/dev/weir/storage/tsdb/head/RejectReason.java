package dev.weir.storage.tsdb.head;

/**
 * Why the head refused a sample. All are client errors: the sample is skipped and the rest of
 * the request is appended. The {@link #id()} is the {@code reason} label of the discarded-samples
 * metric (Mimir's names).
 */
public enum RejectReason {
  /** Older than the newest sample of its series. */
  OUT_OF_ORDER("sample_out_of_order", "the sample is older than the newest sample of its series"),
  /** Same timestamp as the newest sample of its series, different value. */
  DUPLICATE_TIMESTAMP(
      "sample_duplicate_timestamp",
      "the series already has a sample at this timestamp with a different value"),
  /**
   * Older than the head accepts: before the last compacted block's end, or more than half a
   * block range older than the newest sample of the tenant (Prometheus' rule).
   */
  OUT_OF_BOUNDS("sample_out_of_bounds", "the sample is too old for the head (older than the oldest time it"
      + " still accepts)"),
  /**
   * With an out-of-order window: older than the newest sample of the tenant minus the window
   * (Mimir's {@code sample-too-old}).
   */
  TOO_OLD("sample_too_old", "the sample is older than the out-of-order time window allows (older than the newest"
      + " sample of the tenant minus --ingester.out-of-order-time-window)");

  private final String id;
  private final String description;

  RejectReason(String id, String description) {
    this.id = id;
    this.description = description;
  }

  public String id() {
    return id;
  }

  public String description() {
    return description;
  }
}
