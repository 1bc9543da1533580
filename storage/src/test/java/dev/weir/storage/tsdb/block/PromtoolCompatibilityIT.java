package dev.weir.storage.tsdb.block;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus' own tool reads the blocks Weir compacts: {@code promtool tsdb analyze} accepts them
 * and {@code promtool tsdb dump} prints exactly the samples that were written.
 */
class PromtoolCompatibilityIT {
  static final String PROMTOOL = "/usr/bin/promtool";
  static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  static String run(Path cwd, String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s:\n%s", String.join(" ", cmd), out.length() > 2000 ? out.substring(0, 2000) : out)
        .isZero();
    return out;
  }

  @Test
  void promtoolAnalyzesAndDumpsWeirBlocksExactly() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir.resolve("data")), TsdbMetrics.noop(), () -> 0, t -> () -> 0);
    tsdb.open();
    Map<String, List<String>> written = new TreeMap<>();
    Random r = new Random(42);
    int series = 200;
    // 6 hours of 15s scrapes, time-major; values include integers, fractions, NaN and ±Inf.
    Appender app = tsdb.head("t1").appender();
    for (long t = 0; t < 6 * HOUR; t += 15_000) {
      for (int s = 0; s < series; s++) {
        Labels l = Labels.of("__name__", "metric_" + (s % 7), "instance", "10.0.0." + s + ":9100",
            "job", s % 2 == 0 ? "node" : "app", "path", "/a \"quoted\" \\ value");
        double v = switch (r.nextInt(20)) {
          case 0 -> Double.POSITIVE_INFINITY;
          case 1 -> Double.NaN;
          case 2 -> -r.nextInt(1000);
          default -> r.nextInt(100_000) / 8.0;
        };
        app.add(app.series(l), t, v);
        if (t < 4 * HOUR) { // the blocks will cover [0h, 4h)
          written.computeIfAbsent(key(l), k -> new ArrayList<>()).add(format(v) + " " + t);
        }
      }
      app.commit(false);
    }
    tsdb.compactAll();
    assertThat(tsdb.tenant("t1").blocks()).hasSize(2);
    Path promDir = Files.createDirectories(dir.resolve("prom"));
    Files.createDirectories(promDir.resolve("wal")); // promtool dump opens the DB and wants a WAL dir
    try (Stream<Path> blocks = Files.list(dir.resolve("data/tsdb/t1"))) {
      for (Path b : blocks.toList()) {
        Path dest = Files.createDirectories(promDir.resolve(b.getFileName()));
        try (Stream<Path> files = Files.walk(b)) {
          for (Path f : files.toList()) {
            Path to = dest.resolve(b.relativize(f).toString());
            if (Files.isDirectory(f)) {
              Files.createDirectories(to);
            } else {
              Files.copy(f, to);
            }
          }
        }
      }
    }
    tsdb.close();

    String analyze = run(dir, PROMTOOL, "tsdb", "analyze", promDir.toString());
    assertThat(analyze).contains("Series: " + series).contains("Label names: 4");

    String dump = run(dir, PROMTOOL, "tsdb", "dump", promDir.toString());
    Map<String, List<String>> dumped = new TreeMap<>();
    for (String line : dump.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      int close = line.lastIndexOf('}');
      String[] rest = line.substring(close + 2).split(" ");
      dumped.computeIfAbsent(line.substring(0, close + 1), k -> new ArrayList<>()).add(rest[0] + " " + rest[1]);
    }
    assertThat(dumped.keySet()).isEqualTo(written.keySet());
    for (String k : written.keySet()) {
      assertThat(dumped.get(k)).as("samples of %s", k).isEqualTo(written.get(k));
    }
  }

  /** The series as promtool prints it: Go's %q quoting of values. */
  static String key(Labels l) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < l.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(l.name(i)).append("=\"")
          .append(l.value(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return sb.append('}').toString();
  }

  /** A value as Go's strconv.FormatFloat(v, 'g', -1, 64) prints it, for the values used above. */
  static String format(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == Math.rint(v)) {
      return String.valueOf((long) v);
    }
    return new java.math.BigDecimal(v).stripTrailingZeros().toPlainString();
  }
}
