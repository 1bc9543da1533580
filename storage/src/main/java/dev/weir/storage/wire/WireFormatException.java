package dev.weir.storage.wire;

/** The bytes are not a well-formed protobuf message of the expected type. */
public final class WireFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  WireFormatException(String message) {
    super(message, null, false, false);
  }
}
