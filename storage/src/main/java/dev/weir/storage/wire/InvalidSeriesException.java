package dev.weir.storage.wire;

/**
 * One series of a remote write 2.0 request is invalid (a symbol reference out of range, an odd
 * {@code labels_refs} length, an inconsistent native histogram) while the request as a whole is
 * well-formed: that series is refused under {@link #reason()} (a discarded-samples reason), the
 * others are still read. The message names the series.
 */
public final class InvalidSeriesException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String reason;

  InvalidSeriesException(String reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public String reason() {
    return reason;
  }
}
