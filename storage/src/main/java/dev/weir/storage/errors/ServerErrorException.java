package dev.weir.storage.errors;

/**
 * A failure on our side that may go away (disk full, I/O error, a dependency down). The write was
 * not stored, or not durably: the client must retry, and the Kafka reader retries the record
 * without moving past it. Maps to HTTP 503 / gRPC UNAVAILABLE.
 */
public class ServerErrorException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ServerErrorException(String message, Throwable cause) {
    super(message, cause);
  }

  public ServerErrorException(String message) {
    super(message);
  }
}
