package dev.weir.ingester.config;

/** A flag, YAML key or value that cannot be accepted; the message names the key. */
public final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
