package dev.weir.storage.bench;

import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.HeadOptions;
import dev.weir.storage.tsdb.head.TenantHead;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * Measures heap bytes per active series: live heap after a full GC, before and after filling a
 * head with N realistic series (10 labels) of S samples each (15 s apart), divided by N. Also
 * prints the head's own estimate for comparison. Usage: {@code HeadMemoryMeasurement [N] [S]};
 * {@code -Dweir.bench.histogram=true} also prints the live heap's top classes per series.
 */
public final class HeadMemoryMeasurement {
  private HeadMemoryMeasurement() {}

  static long usedAfterGc() throws InterruptedException {
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    long before = usedAfterGc();
    TenantHead head = new TenantHead("m", HeadConfig.DEFAULT, HeadOptions.inMemory(() -> 0));
    Random r = new Random(1);
    Appender app = head.appender();
    for (int k = 0; k < samples; k++) {
      for (int s = 0; s < n; s++) {
        app.add(app.series(BenchData.series(s)), k * 15_000L, BenchData.value(r, s));
        if (app.size() == 5000) {
          app.commit(false);
        }
      }
      app.commit(false);
    }
    long after = usedAfterGc();
    System.out.printf("series=%d samples_per_series=%d heap_bytes_per_series=%.0f head_estimate_per_series=%.0f%n",
        n, samples, (after - before) / (double) n,
        head.memoryBytesEstimate() / (double) n);
    if (Boolean.getBoolean("weir.bench.histogram")) {
      // Where the bytes are: the live heap's top classes (jcmd of this JVM), per series.
      Process p = new ProcessBuilder("jcmd", Long.toString(ProcessHandle.current().pid()), "GC.class_histogram")
          .redirectErrorStream(true).start();
      String[] lines = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
          .split("\n");
      for (int i = 0; i < Math.min(lines.length, 22); i++) {
        String[] f = lines[i].trim().split("\\s+");
        if (f.length >= 4 && f[0].endsWith(":")) {
          System.out.printf("%8.1f B/series %6.2f objects/series  %s%n", Long.parseLong(f[2]) / (double) n,
              Long.parseLong(f[1]) / (double) n, f[3]);
        }
      }
    }
    if (head.numSeries() != n) {
      throw new IllegalStateException("expected " + n + " series, got " + head.numSeries());
    }
  }
}
