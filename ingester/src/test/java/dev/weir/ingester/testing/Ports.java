package dev.weir.ingester.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** Free loopback ports for child processes (bound, then released for the child to take). */
public final class Ports {
  private Ports() {}

  /** A free port below the ephemeral range ({@link dev.weir.ring.testing.LoopbackPorts}). */
  public static int free() {
    return dev.weir.ring.testing.LoopbackPorts.free();
  }
}
