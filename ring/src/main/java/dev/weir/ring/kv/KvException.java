package dev.weir.ring.kv;

/** The KV store could not be reached or refused an operation (retrying may help). */
public final class KvException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public KvException(String message, Throwable cause) {
    super(message, cause);
  }

  public KvException(String message) {
    super(message);
  }
}
