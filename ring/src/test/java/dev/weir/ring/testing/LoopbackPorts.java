package dev.weir.ring.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Free loopback ports for servers the tests start as child processes. A port the kernel picked for
 * {@code new ServerSocket(0)} comes from the ephemeral range, where any outgoing connection (a
 * Kafka client, an HTTP client) may take it as its local port between the check and the child's
 * bind; the child then fails with "address already in use" (seen in the suite). So ports come from
 * below the ephemeral range ({@code /proc/sys/net/ipv4/ip_local_port_range}), which the kernel
 * never hands out by itself, and above the fixed ports of {@code deploy/local} (below 10000); each
 * is handed out once per JVM, from a random start so that two JVMs rarely walk the same ports, and
 * only after a bind shows it is free.
 */
public final class LoopbackPorts {
  private static final int LOW = 10_000;
  private static final int HIGH = ephemeralStart();
  private static final AtomicInteger NEXT = new AtomicInteger(ThreadLocalRandom.current().nextInt(HIGH - LOW));

  private LoopbackPorts() {}

  /** A port no process listens on now, never returned before by this JVM. */
  public static int free() {
    for (int tries = 0; tries < HIGH - LOW; tries++) {
      int port = LOW + Math.floorMod(NEXT.getAndIncrement(), HIGH - LOW);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException inUse) {
        // next one
      }
    }
    throw new UncheckedIOException(new IOException("no free loopback port in [" + LOW + ", " + HIGH + ")"));
  }

  private static int ephemeralStart() {
    try {
      int start = Integer.parseInt(Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim()
          .split("\\s+")[0]);
      return start > LOW + 1_000 ? start : 32_768;
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
