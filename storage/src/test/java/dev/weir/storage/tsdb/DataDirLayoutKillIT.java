package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.testing.FormerWal;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process killed with SIGKILL in the middle of moving a data directory to the per-tenant layout,
 * or of converting the WALs from Weir's former format, leaves a state the next start completes,
 * with every sample.
 */
class DataDirLayoutKillIT {
  static final int TENANTS = 20;
  static final int SERIES = 3;
  static final int POINTS = 40;

  @TempDir Path dir;

  /** Runs the move in a child process, pausing before each rename so the kill lands mid-way. */
  public static final class MigrateMain {
    public static void main(String[] args) throws Exception {
      DataDirLayout.migrate(Path.of(args[0]), (from, to) -> {
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
      });
    }
  }

  private static String tenant(int i) {
    return String.format("t%02d", i);
  }

  @Test
  void aMoveKilledMidWayIsCompletedByTheNextStartWithEverySample() throws Exception {
    killMidWayAndRestart("tsdb/t01/weir-wal");
  }

  @Test
  void aConversionKilledMidWayIsCompletedByTheNextStartWithEverySample() throws Exception {
    killMidWayAndRestart("tsdb/t05/wal/checkpoint.00000000");
  }

  /** Kills the migration as soon as {@code marker} exists under the data dir, then reopens. */
  private void killMidWayAndRestart(String marker) throws Exception {
    Path data = dir.resolve("data");
    Tsdb t = new Tsdb(TsdbConfig.defaults(data), TsdbMetrics.noop(), () -> 0, x -> () -> 0);
    t.open();
    for (int i = 0; i < TENANTS; i++) {
      Appender app = t.head(tenant(i)).appender();
      for (int k = 0; k < POINTS; k++) {
        for (int s = 0; s < SERIES; s++) {
          app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(s))), k * 1000L, i * 100 + s + k);
        }
        assertThat(app.commit(true).rejections()).isEmpty();
      }
    }
    t.close();
    // The old layout: <data>/wal/<tenant>, no tenant directory under tsdb/ (no blocks yet).
    Files.createDirectories(data.resolve("wal"));
    for (int i = 0; i < TENANTS; i++) {
      FormerWal.downgrade(data.resolve("tsdb").resolve(tenant(i)).resolve("wal"), data.resolve("wal").resolve(tenant(i)));
      Files.delete(data.resolve("tsdb").resolve(tenant(i)));
    }

    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(javaBin, "-Xmx128m", "-cp", System.getProperty("java.class.path"),
        MigrateMain.class.getName(), data.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("child.log").toFile()).start();
    try {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
          .until(() -> Files.isDirectory(data.resolve(marker)) || !child.isAlive());
      child.destroyForcibly().waitFor(); // SIGKILL
    } finally {
      child.destroyForcibly();
    }
    long left = IntStream.range(0, TENANTS).filter(i -> Files.isDirectory(data.resolve("wal").resolve(tenant(i))))
        .count();
    long moved = IntStream.range(0, TENANTS)
        .filter(i -> Files.isDirectory(data.resolve("tsdb").resolve(tenant(i)).resolve("weir-wal"))).count();
    long converting = IntStream.range(0, TENANTS).filter(i -> Files.isDirectory(data.resolve("tsdb").resolve(tenant(i))
        .resolve("weir-wal.converting"))).count();
    long converted = IntStream.range(0, TENANTS).filter(i -> !Files.isDirectory(data.resolve("tsdb").resolve(tenant(i))
        .resolve("weir-wal.converting")) && Files.isDirectory(data.resolve("tsdb").resolve(tenant(i))
        .resolve("wal/checkpoint.00000000"))).count();
    String state = "left " + left + ", moved " + moved + ", converting " + converting + ", converted " + converted
        + "; " + Files.readString(dir.resolve("child.log"));
    assertThat(left).as("killed after the first move: %s", state).isLessThan(TENANTS);
    assertThat(converted).as("killed before the last conversion: %s", state).isLessThan(TENANTS);
    assertThat(left + moved + converting + converted).as("every tenant's WAL at one place: %s", state)
        .isGreaterThanOrEqualTo(TENANTS);

    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Tsdb again = new Tsdb(TsdbConfig.defaults(data), new TsdbMetrics(registry), () -> 0, x -> () -> 0);
    again.open();
    try {
      assertThat(again.tenants()).hasSize(TENANTS);
      assertThat(registry.get("weir.tsdb.replayed.samples").counter().count()).isEqualTo(TENANTS * SERIES * POINTS);
      for (int i = 0; i < TENANTS; i++) {
        List<SeriesChunks> series = again.tenant(tenant(i)).select(Long.MIN_VALUE, Long.MAX_VALUE, List.of());
        assertThat(series).hasSize(SERIES);
        for (SeriesChunks s : series) {
          SeriesChunks.Samples got = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
          assertThat(got.size()).isEqualTo(POINTS);
          int index = Integer.parseInt(s.labels().get("s"));
          for (int k = 0; k < POINTS; k++) {
            assertThat(got.timestamps()[k]).isEqualTo(k * 1000L);
            assertThat(got.values()[k]).isEqualTo(i * 100 + index + k);
          }
        }
      }
      assertThat(data.resolve("wal")).doesNotExist();
      try (Stream<Path> s = Files.list(data.resolve("tsdb"))) {
        assertThat(s.toList()).allSatisfy(d -> {
          assertThat(d.resolve("wal/checkpoint.00000000")).isDirectory();
          assertThat(d.resolve("weir-wal")).doesNotExist();
          assertThat(d.resolve("weir-wal.converting")).doesNotExist();
        });
      }
    } finally {
      again.close();
    }
  }
}
