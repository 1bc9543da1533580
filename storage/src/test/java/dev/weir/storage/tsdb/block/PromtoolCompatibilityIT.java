package dev.weir.storage.tsdb.block;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus' own tool reads the blocks Weir compacts: {@code promtool tsdb analyze} accepts them
 * and {@code promtool tsdb dump} prints exactly the samples that were written.
 */
class PromtoolCompatibilityIT {
  static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  @Test
  void promtoolAnalyzesAndDumpsWeirBlocksExactly() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir.resolve("data")), TsdbMetrics.noop(), () -> 0, t -> () -> 0);
    tsdb.open();
    Map<String, List<String>> written = new TreeMap<>();
    Map<String, List<String>> all = new TreeMap<>();
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
        all.computeIfAbsent(Promtool.key(l), k -> new ArrayList<>()).add(Promtool.format(v) + " " + t);
        if (t < 4 * HOUR) { // the blocks will cover [0h, 4h)
          written.computeIfAbsent(Promtool.key(l), k -> new ArrayList<>()).add(Promtool.format(v) + " " + t);
        }
      }
      app.commit(false);
    }
    tsdb.compactAll();
    assertThat(tsdb.tenant("t1").blocks()).hasSize(2);
    // In place, with the storage open: the tenant directory is a TSDB directory promtool opens,
    // blocks and head (from the WAL).
    assertThat(Promtool.dumpInPlace(dir.resolve("data/tsdb/t1"))).as("dumped in place").isEqualTo(all);
    tsdb.close();
    Map<String, List<String>> dumped = Promtool.dump(dir.resolve("data/tsdb/t1"), dir.resolve("prom"));
    String analyze = Promtool.run(dir, Promtool.PROMTOOL, "tsdb", "analyze", dir.resolve("prom").toString());
    assertThat(analyze).contains("Series: " + series).contains("Label names: 4");

    assertThat(dumped.keySet()).isEqualTo(written.keySet());
    for (String k : written.keySet()) {
      assertThat(dumped.get(k)).as("samples of %s", k).isEqualTo(written.get(k));
    }
  }
}
