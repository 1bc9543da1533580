package dev.weir.storage.errors;

/**
 * Invalid input: retrying the same data cannot succeed. Carries the {@code reason} under which
 * it is counted (Mimir's reason names, e.g. {@code sample_out_of_order}) and the HTTP status it
 * maps to (400 by default; 401 for a missing tenant, 413 for a body too large, 429 for a rate
 * limit).
 */
public class ClientErrorException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String reason;
  private final int httpStatus;

  public ClientErrorException(String reason, String message) {
    this(reason, message, 400);
  }

  public ClientErrorException(String reason, String message, int httpStatus) {
    super(message, null, false, false);
    if (httpStatus < 400 || httpStatus > 499) {
      throw new IllegalArgumentException("not a client error status: " + httpStatus);
    }
    this.reason = reason;
    this.httpStatus = httpStatus;
  }

  public String reason() {
    return reason;
  }

  public int httpStatus() {
    return httpStatus;
  }
}
