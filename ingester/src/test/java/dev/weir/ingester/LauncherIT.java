package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.Ports;
import dev.weir.ingester.testing.RepoPaths;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/weir}'s class data sharing, run as a user runs it: the first server run that exits
 * normally writes the archive, the next start maps Weir's classes from it, a stale archive is
 * written again, and neither {@code --help} nor {@code WEIR_CDS=off} writes one. Where classes
 * came from is read from the JVM's own class-loading log ({@code -Xlog:class+load}).
 */
class LauncherIT {
  private static final String FROM_ARCHIVE = "source: shared objects file (top)";

  @TempDir Path dir;

  @Test
  void theFirstNormalExitWritesTheArchiveAndTheNextStartMapsWeirsClassesFromIt() throws Exception {
    Path archive = dir.resolve("weir.jsa");
    Path firstLog = runUntilReadyAndStop("first", archive, "on");
    assertThat(archive).exists();
    assertThat(Files.readString(firstLog)).contains("dev.weir.ingester.Main source: file:").doesNotContain(FROM_ARCHIVE);

    FileTime written = Files.getLastModifiedTime(archive);
    Path secondLog = runUntilReadyAndStop("second", archive, "on");
    assertThat(Files.readString(secondLog)).contains("dev.weir.ingester.Main " + FROM_ARCHIVE);
    assertThat(Files.getLastModifiedTime(archive)).as("a current archive is only read").isEqualTo(written);

    // Older than the jar (a jar built after it): the next normal exit writes a new one.
    Files.setLastModifiedTime(archive, FileTime.from(Instant.parse("2001-01-01T00:00:00Z")));
    Path thirdLog = runUntilReadyAndStop("third", archive, "on");
    assertThat(Files.readString(thirdLog)).doesNotContain(FROM_ARCHIVE);
    assertThat(Files.getLastModifiedTime(archive)).isGreaterThan(FileTime.from(Instant.parse("2001-01-01T00:00:00Z")));
  }

  @Test
  void offAndHelpWriteNoArchive() throws Exception {
    Path archive = dir.resolve("weir.jsa");
    runUntilReadyAndStop("off", archive, "off");
    assertThat(archive).doesNotExist();

    Process help = launcher(archive, "on", dir.resolve("help.log"), "--help").start();
    assertThat(help.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(help.exitValue()).isZero();
    assertThat(archive).doesNotExist();
  }

  /** Starts bin/weir, waits for /ready, stops it with SIGTERM; returns its class-loading log. */
  private Path runUntilReadyAndStop(String name, Path archive, String cds) throws Exception {
    int http = Ports.free();
    int grpc = Ports.free();
    Path classLog = dir.resolve(name + "-classes.log");
    ProcessBuilder pb = launcher(archive, cds, classLog, "--server.http-listen-address=127.0.0.1",
        "--server.http-listen-port=" + http, "--server.grpc-listen-address=127.0.0.1",
        "--server.grpc-listen-port=" + grpc, "--ingester.data-dir=" + dir.resolve(name + "-data"),
        "--blocks-storage.filesystem.dir=" + dir.resolve(name + "-bucket"));
    Process p = pb.redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile()).start();
    try {
      awaitReady(p, http, name);
      p.destroy(); // SIGTERM to java itself: bin/weir execs it
      assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("exit after SIGTERM").isTrue();
    } finally {
      p.destroyForcibly();
    }
    return classLog;
  }

  private ProcessBuilder launcher(Path archive, String cds, Path classLog, String... args) {
    List<String> cmd = new java.util.ArrayList<>();
    cmd.add(RepoPaths.root().resolve("bin").resolve("weir").toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
    pb.environment().put("WEIR_CDS", cds);
    pb.environment().put("WEIR_CDS_ARCHIVE", archive.toString());
    pb.environment().put("JAVA_OPTS", "-Xlog:class+load=info:file=" + classLog);
    pb.environment().remove("WEIR_JAVA_OPTS");
    return pb;
  }

  private void awaitReady(Process p, int http, String name) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Instant deadline = Instant.now().plus(Duration.ofSeconds(120));
    while (Instant.now().isBefore(deadline)) {
      if (!p.isAlive()) {
        throw new IllegalStateException("bin/weir exited with " + p.exitValue() + ":\n"
            + Files.readString(dir.resolve(name + ".log")));
      }
      try {
        HttpResponse<Void> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/ready"))
            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("bin/weir not ready within 120 s");
  }
}
