package dev.weir.storage.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Starts a server as a child process with its output in a log file, and waits until it answers. */
public final class ChildServer {
  private ChildServer() {}

  /** Whether the server answers yet; any exception means "not yet". */
  public interface Probe {
    void check() throws Exception;
  }

  /**
   * Starts {@code cmd} appending its output to {@code log} and returns once {@code probe} passes;
   * fails with the log when the process exits first or {@code timeout} passes.
   */
  public static Process start(String what, List<String> cmd, Path log, Duration timeout, Probe probe)
      throws Exception {
    Process process = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException(what + " exited: " + Files.readString(log));
      }
      try {
        probe.check();
        return process;
      } catch (Exception notYet) {
        Thread.sleep(150);
      }
    }
    throw new IllegalStateException(what + " not ready after " + timeout + ": " + Files.readString(log));
  }
}
