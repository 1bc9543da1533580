package dev.weir.ingester.testing;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A small tmpfs mounted over a test directory, to fill a disk for real. Mounting needs root (or
 * CAP_SYS_ADMIN), as in the test container; elsewhere the test is skipped with that reason.
 * {@link #close} unmounts lazily, so a process still holding files there does not block it.
 */
public final class Tmpfs implements AutoCloseable {
  private final Path dir;

  private Tmpfs(Path dir) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of {@code size} (mount's syntax, e.g. {@code 16m}) on {@code dir}, or skips the test. */
  public static Tmpfs mount(Path dir, String size) throws Exception {
    Assumptions.assumeTrue(sh("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString()) == 0,
        "cannot mount tmpfs here (needs root / CAP_SYS_ADMIN)");
    return new Tmpfs(dir);
  }

  @Override
  public void close() throws Exception {
    sh("umount", "-l", dir.toString());
  }

  private static int sh(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
  }
}
