package dev.weir.storage.bench;

import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.labels.Labels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * WAL write and replay. {@code appendLogged}: the head's append path including encoding and
 * writing the WAL record (page cache, fsync off), samples/s. {@code replay}: opening a tenant
 * whose WAL holds {@code numSeries} series × 120 samples — decode, series creation, XOR
 * appends — samples/s.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class WalBenchmark {
  static final int BATCH = 2000;
  static final int SAMPLES_PER_SERIES = 120;

  @Param({"50000"})
  int numSeries;

  private Path dir;
  private Labels[] labels;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("weir-wal-bench");
    labels = new Labels[numSeries];
    for (int i = 0; i < numSeries; i++) {
      labels[i] = BenchData.series(i);
    }
    try (Tsdb tsdb = open(dir.resolve("replay"))) {
      Appender app = tsdb.head("t").appender();
      for (int k = 0; k < SAMPLES_PER_SERIES; k++) {
        for (int s = 0; s < numSeries; s++) {
          app.add(app.series(labels[s]), k * 15_000L, s + k);
          if ((s + 1) % BATCH == 0) {
            app.commit(false);
          }
        }
        app.commit(false);
      }
    }
  }

  static Tsdb open(Path d) throws Exception {
    TsdbConfig c = TsdbConfig.defaults(d);
    c = new TsdbConfig(c.dataDir(), c.head(), c.walSegmentBytes(), TsdbConfig.FsyncMode.INTERVAL,
        java.time.Duration.ofHours(1), false, java.time.Duration.ZERO, java.time.Duration.ofHours(1),
        c.channelOpener());
    Tsdb t = new Tsdb(c, TsdbMetrics.noop(), () -> 0, x -> () -> 0);
    t.open();
    return t;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** Replays the whole WAL into a fresh head; score: nanoseconds per replayed sample. */
  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Warmup(iterations = 2)
  @Measurement(iterations = 5)
  @OperationsPerInvocation(50000 * SAMPLES_PER_SERIES)
  public int replay() throws Exception {
    // Copy the WAL so every iteration replays the same input (opening starts a new segment).
    Path copy = Files.createTempDirectory(dir, "iter");
    Path src = dir.resolve("replay");
    try (Stream<Path> s = Files.walk(src)) {
      for (Path p : s.toList()) {
        Path to = copy.resolve(src.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(to);
        } else {
          Files.copy(p, to);
        }
      }
    }
    try (Tsdb t = open(copy)) {
      return t.head("t").numSeries();
    }
  }

  /** Per-thread state for appends with a WAL (fsync in the background, as in Kafka mode). */
  @State(Scope.Thread)
  public static class AppendState {
    Tsdb tsdb;
    Path d;
    long t = 15_000;
    int next;

    @Setup(Level.Trial)
    public void setUp(WalBenchmark b) throws Exception {
      d = Files.createTempDirectory("weir-wal-append");
      tsdb = open(d);
      Appender app = tsdb.head("t").appender();
      for (Labels l : b.labels) {
        app.add(app.series(l), 0, 0);
      }
      app.commit(false);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      tsdb.close();
      try (Stream<Path> s = Files.walk(d)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Warmup(iterations = 3, time = 2)
  @Measurement(iterations = 5, time = 2)
  @OperationsPerInvocation(BATCH)
  public int appendLogged(AppendState st) {
    Appender app = st.tsdb.head("t").appender();
    for (int i = 0; i < BATCH; i++) {
      int s = st.next++;
      if (st.next == numSeries) {
        st.next = 0;
        st.t += 15_000;
      }
      app.add(app.series(labels[s]), st.t, s);
    }
    return app.commit(false).appended();
  }
}
