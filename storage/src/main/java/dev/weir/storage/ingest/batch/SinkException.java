package dev.weir.storage.ingest.batch;

/** A failed flush: {@link #retryable()} says whether redoing the cycle can succeed. */
public final class SinkException extends Exception {
  private final boolean retryable;
  private final String kind;

  /**
   * @param kind a short label for metrics ({@code upload}, {@code disk}, …)
   */
  public SinkException(String kind, String message, boolean retryable, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.retryable = retryable;
  }

  public SinkException(String kind, String message, boolean retryable) {
    super(message);
    this.kind = kind;
    this.retryable = retryable;
  }

  public boolean retryable() {
    return retryable;
  }

  public String kind() {
    return kind;
  }
}
