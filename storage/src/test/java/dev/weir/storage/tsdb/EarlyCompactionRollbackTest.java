package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
  * the "earlyCompaction" flag in meta.json is load-bearing. A reader that does not know it
 * (the previous Weir release after a rollback, or isEarlyBlock() failing open on an I/O error)
 * raises minValidTime to the early block's end and the WAL replay skips the samples older than it
 * that the head kept (chunks across the cut), which are in no block.
 */
class EarlyCompactionRollbackTest {
  private static final long RANGE = 60_000;
  @TempDir Path dir;

  private Tsdb open() throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120, 8)).withRetention(Duration.ZERO);
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(new SimpleMeterRegistry()), () -> 1_000, tenant -> () -> 0);
    t.earlyCompaction(new EarlyCompaction.Config(1, 0, 15, Duration.ofHours(1)));
    t.open();
    return t;
  }

  private static long count(Tsdb t) {
    long n = 0;
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      n += s.samples(Long.MIN_VALUE, Long.MAX_VALUE).timestamps().length;
    }
    return n;
  }

  @Test
  void aReaderUnawareOfTheEarlyFlagLosesTheSamplesOfChunksAcrossTheCut() throws Exception {
    Tsdb t = open();
    Appender app = t.head("a").appender();
    long acked = 0;
    for (int gen = 0; gen < 4; gen++) { // as EarlyCompactionTest: gen × 20 s + 0, 5, 10, 15 s
      for (long ts = gen * 20_000L; ts < gen * 20_000L + 20_000; ts += 5_000) {
        for (int s = 0; s < 50; s++) {
          app.add(app.series(Labels.of("__name__", "churn", "gen", String.valueOf(gen), "pod", "p" + s)), ts, ts);
          acked++;
        }
        assertThat(app.commit(true).rejections()).isEmpty();
      }
    }
    assertThat(t.compactEarlyIfOverThreshold()).isEqualTo(1); // cut at 45 s; gen 2's chunk [40, 55 s] stays
    Block early = t.tenant("a").blocks().get(0);
    assertThat(count(t)).isEqualTo(acked);
    t.close();

    // What the release before this commit does with the block: it does not know the flag.
    Path meta = early.dir().resolve("meta.json");
    Files.writeString(meta, Files.readString(meta).replace(", \"earlyCompaction\": true", ""));
    Tsdb again = open();
    assertThat(count(again)).as("every acknowledged sample after a restart by a reader without the flag")
        .isEqualTo(acked);
    again.close();
  }
}
