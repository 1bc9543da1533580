package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
  * a series whose in-order chunks an early compaction wrote to a block but which keeps
 * out-of-order samples stays in the head with no in-order sample; heldFrom() then answers
 * Long.MIN_VALUE, so the checkpoint keeps its in-order WAL samples and every restart replays
 * them into the head beside the early block (and the next normal compaction writes them again).
 */
class EarlyCompactionOooDuplicateTest {
  private static final long RANGE = 60_000;
  private static final EarlyCompaction.Config MANUAL = new EarlyCompaction.Config(1, 0, 0, Duration.ofHours(1));
  @TempDir Path dir;

  private Tsdb open() throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120, 8)).withRetention(Duration.ZERO);
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(new SimpleMeterRegistry()), () -> 1_000, tenant -> () -> 0);
    t.earlyCompaction(MANUAL);
    t.outOfOrderWindows(tenant -> () -> 70_000);
    t.open();
    return t;
  }

  private static long[] storedAndDistinct(Tsdb t) {
    long stored = 0;
    long distinct = 0;
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      TreeSet<Long> ts = new TreeSet<>();
      for (long x : s.samples(Long.MIN_VALUE, Long.MAX_VALUE).timestamps()) {
        ts.add(x);
      }
      distinct += ts.size();
      for (ChunkData c : s.chunks()) {
        stored += Chunks.numSamples(c.encoding(), c.bytes());
      }
    }
    return new long[] {stored, distinct};
  }

  @Test
  void aSeriesKeptForItsOutOfOrderSamplesIsNotReplayedTwice() throws Exception {
    Tsdb t = open();
    Labels quiet = Labels.of("__name__", "quiet");
    Appender app = t.head("a").appender();
    for (long ts = 0; ts <= 15_000; ts += 5_000) {
      app.add(app.series(quiet), ts, ts);
    }
    assertThat(app.commit(true).rejections()).isEmpty();
    for (long ts = 0; ts <= 75_000; ts += 5_000) {
      for (int s = 0; s < 10; s++) {
        app.add(app.series(Labels.of("__name__", "busy", "s", String.valueOf(s))), ts, ts);
      }
      assertThat(app.commit(true).rejections()).isEmpty();
    }
    app.add(app.series(quiet), 12_500, 1); // out of order (window 70 s): the series keeps it in its OOO head
    assertThat(app.commit(true).outOfOrder()).isEqualTo(1);

    assertThat(t.compactEarlyIfOverThreshold()).isEqualTo(1); // cut at 45 s: quiet's chunk [0, 15 s] goes
    long[] before = storedAndDistinct(t);
    assertThat(before[0]).as("before the restart: each sample stored once").isEqualTo(before[1]);
    t.close();

    Tsdb again = open();
    long[] after = storedAndDistinct(again);
    assertThat(after[1]).isEqualTo(before[1]);
    assertThat(after[0]).as("after the restart: quiet's 4 in-order samples are in the early block and in the head")
        .isEqualTo(after[1]);
    again.close();
  }
}
