package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
  * TenantDb.select reads the block list before the head; a compaction that adds its block
 * and truncates the head in between hides acknowledged samples from that query.
 */
class EarlyCompactionQueryGapTest {
  private static final long RANGE = 60_000;
  @TempDir Path dir;

  @Test
  void aQueryRacingAnEarlyCompactionNeverMissesAcknowledgedSamples() throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 5, 8)).withRetention(Duration.ZERO);
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(new SimpleMeterRegistry()), () -> 1_000, tenant -> () -> 0);
    t.earlyCompaction(new EarlyCompaction.Config(1, 0, 0, Duration.ofHours(1)));
    t.open();
    try {
      int series = 6_000;
      AtomicLong ackedUpTo = new AtomicLong(-1); // every series has every second up to this
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<String> gap = new AtomicReference<>();
      Thread writer = new Thread(() -> {
        for (long ts = 0; ts < 240_000 && !stop.get(); ts += 1_000) {
          Appender app = t.head("a").appender();
          for (int s = 0; s < series; s++) {
            app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(s))), ts, ts);
          }
          assertThat(app.commit(false).rejections()).isEmpty();
          ackedUpTo.set(ts);
          try {
            Thread.sleep(2);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      Thread reader = new Thread(() -> {
        while (!stop.get() && gap.get() == null) {
          long upTo = ackedUpTo.get();
          if (upTo < 0) {
            continue;
          }
          long n = 0;
          for (SeriesChunks s : t.tenant("a").select(0, upTo, List.of())) {
            n += s.samples(0, upTo).timestamps().length;
          }
          long want = (upTo / 1_000 + 1) * series;
          if (n < want) {
            gap.set("query [0, " + upTo + "] found " + n + " of " + want + " acknowledged samples");
          }
        }
      });
      writer.start();
      reader.start();
      while (writer.isAlive() && gap.get() == null) {
        t.compactEarlyIfOverThreshold();
      }
      stop.set(true);
      writer.join();
      reader.join();
      long n = 0;
      java.util.TreeMap<Long, Integer> missingAt = new java.util.TreeMap<>();
      long upTo = ackedUpTo.get();
      for (SeriesChunks s : t.tenant("a").select(0, upTo, List.of())) {
        long[] ts = s.samples(0, upTo).timestamps();
        n += ts.length;
        java.util.Set<Long> have = new java.util.HashSet<>();
        for (long x : ts) have.add(x);
        for (long x = 0; x <= upTo; x += 1000) if (!have.contains(x)) missingAt.merge(x, 1, Integer::sum);
      }
      System.out.println("early compaction stress: final count " + n + " of " + (upTo / 1000 + 1) * series + " missing " + missingAt
          + " blocks=" + t.tenant("a").blocks().size() + " gap=" + gap.get());
      assertThat(gap.get()).as("a query missed samples").isNull();
    } finally {
      t.close();
    }
  }
}
