package dev.weir.ring.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real etcd (Debian's {@code /usr/bin/etcd}, installed by {@code bin/test}) as a child process
 * on loopback, for tests. {@link #shared()} is one instance per test JVM (use a unique key prefix
 * per test); tests that stop or restart etcd start their own.
 *
 * <p>Not thread-safe.
 */
public final class EtcdServer implements AutoCloseable {
  public static final String BINARY = "/usr/bin/etcd";
  private static EtcdServer shared;

  private final Path dataDir;
  private final Path log;
  private final int clientPort;
  private final int peerPort;
  private Process process;

  private EtcdServer(Path dataDir, int clientPort, int peerPort) {
    this.dataDir = dataDir;
    this.log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
    this.clientPort = clientPort;
    this.peerPort = peerPort;
  }

  /** The etcd shared by all tests of this JVM, started on first use. */
  public static synchronized EtcdServer shared() throws Exception {
    if (shared == null) {
      shared = start(Files.createTempDirectory("weir-etcd-shared"));
      EtcdServer s = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(s::close));
    }
    return shared;
  }

  /** Starts a dedicated etcd with its data in {@code dir}. */
  public static EtcdServer start(Path dir) throws Exception {
    if (!Files.isExecutable(Path.of(BINARY))) {
      throw new IllegalStateException(BINARY + " is missing: install Debian's etcd-server (bin/test does)");
    }
    Files.createDirectories(dir);
    // A port picked free can be taken before etcd binds it (other tests start servers too): etcd
    // then exits at once, and a second try on other ports is the remedy.
    for (int attempt = 1; ; attempt++) {
      EtcdServer s = new EtcdServer(dir.resolve("etcd-data-" + attempt), free(), free());
      try {
        s.launch();
        return s;
      } catch (IllegalStateException e) {
        if (attempt == 3 || s.process.isAlive()) {
          throw e;
        }
      }
    }
  }

  private static int free() {
    return LoopbackPorts.free();
  }

  private void launch() throws Exception {
    String client = "http://127.0.0.1:" + clientPort;
    String peer = "http://127.0.0.1:" + peerPort;
    process = new ProcessBuilder(List.of(BINARY, "--name", "weir-test", "--data-dir", dataDir.toString(),
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", "weir-test=" + peer, "--initial-cluster-state", "new"))
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
    awaitHealthy(Duration.ofSeconds(30));
  }

  private void awaitHealthy(Duration timeout) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("etcd exited with status " + process.exitValue() + ": "
            + Files.readString(log));
      }
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
            .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200 && r.body().contains("true")) {
          return;
        }
      } catch (IOException e) {
        // not up yet
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("etcd not healthy after " + timeout + ": " + Files.readString(log));
  }

  public String endpoint() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** Stops etcd (SIGTERM) and waits. */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }

  /** Starts etcd again on the same ports and data. */
  public void restart() throws Exception {
    launch();
  }

  /** Runs {@code etcdctl} against this server and returns its output. */
  public String etcdctl(String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("/usr/bin/etcdctl", "--endpoints", endpoint()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("ETCDCTL_API", "3");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("etcdctl " + String.join(" ", args) + " failed: " + out);
    }
    return out;
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
