package dev.weir.storage.bench;

import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.Appender;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Times a WAL replay: fills one tenant's head with N realistic series (10 labels, {@link BenchData})
 * of S samples each through the WAL, closes the storage, then opens it again (blocks loaded, WAL
 * replayed) {@code R} times and prints each open's seconds and samples per second. Usage:
 * {@code ReplayMeasurement [N] [S] [R] [dir]}; the data directory is kept when given, so a second
 * run with S = 0 replays the same WAL again. Run it with JFR
 * ({@code -XX:StartFlightRecording=settings=profile,filename=replay.jfr}) to see where replay goes.
 * {@code seconds} is the open (the head takes samples from then on); {@code index_complete_seconds}
 * also waits for the postings a large replay builds in the background, as a query would.
 */
public final class ReplayMeasurement {
  private ReplayMeasurement() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    Path dir = args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("weir-replay");
    TsdbConfig cfg = TsdbConfig.defaults(dir).withRetention(java.time.Duration.ZERO);
    if (samples > 0) {
      try (Tsdb t = new Tsdb(cfg, TsdbMetrics.noop(), System::currentTimeMillis, tenant -> () -> 0)) {
        t.open();
        long t0 = System.currentTimeMillis() - 3_600_000L;
        Random r = new Random(1);
        Appender app = t.head("bench").appender();
        for (int k = 0; k < samples; k++) {
          for (int s = 0; s < n; s++) {
            app.add(app.series(BenchData.series(s)), t0 + k * 15_000L, BenchData.value(r, s));
            if (app.size() == 5000) {
              app.commit(false);
            }
          }
          app.commit(false);
        }
        t.sync();
      }
    }
    for (int i = 0; i < rounds; i++) {
      long start = System.nanoTime();
      try (Tsdb t = new Tsdb(cfg, TsdbMetrics.noop(), System::currentTimeMillis, tenant -> () -> 0)) {
        t.open();
        double secs = (System.nanoTime() - start) / 1e9;
        int series = t.head("bench").numSeries();
        // A query waits for the index, which a large replay builds after the open returns.
        t.head("bench").labelNames(Long.MIN_VALUE, Long.MAX_VALUE, java.util.List.of(
            dev.weir.storage.tsdb.labels.Matcher.eq("job", "none")));
        double indexed = (System.nanoTime() - start) / 1e9;
        System.out.printf("replay %d: series=%d samples=%d seconds=%.2f samples_per_s=%.0f series_per_s=%.0f"
            + " index_complete_seconds=%.2f%n", i, series, (long) series * samples, secs,
            (long) series * samples / secs, series / secs, indexed);
      }
    }
  }
}
