package dev.weir.ingester.tool;

/**
 * Ends a subcommand with an exit code and one line for stderr: {@link #usage} (2) for arguments
 * that cannot make sense, {@link #failure} (1) for bad input found at run time (a missing topic,
 * an offset outside the log) or damage found.
 */
final class ToolException extends Exception {
  private static final long serialVersionUID = 1L;

  static final int FAILURE = 1;
  static final int USAGE = 2;

  private final int exitCode;

  private ToolException(int exitCode, String message) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  static ToolException usage(String message) {
    return new ToolException(USAGE, message);
  }

  static ToolException failure(String message) {
    return new ToolException(FAILURE, message);
  }

  int exitCode() {
    return exitCode;
  }
}
