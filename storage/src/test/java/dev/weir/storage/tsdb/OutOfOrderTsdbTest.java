package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.testing.FaultyChannel;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Wal;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The out-of-order head with its write-behind log, replay and compaction, on disk. */
class OutOfOrderTsdbTest {
  private static final long RANGE = 60_000;
  private static final long WINDOW = 3 * RANGE;
  @TempDir Path dir;
  private final List<Tsdb> open = new ArrayList<>();
  /** Faults of the WBL's files only; the WAL's stay healthy. */
  private final FaultyChannel.Faults wblFaults = new FaultyChannel.Faults();
  private SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private Tsdb openTsdb() throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120, 8)).withRetention(Duration.ZERO)
        .withWalSegmentBytes(8 * 1024).withChannelOpener((p, o) -> p.getParent().getFileName().toString()
            .equals("wbl") ? wblFaults.open(p, o) : FileChannel.open(p, o));
    registry = new SimpleMeterRegistry();
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(registry), () -> 1_000, tenant -> () -> 0);
    t.outOfOrderWindows(tenant -> () -> WINDOW);
    t.open();
    open.add(t);
    return t;
  }

  @AfterEach
  void closeAll() {
    wblFaults.fsyncFails.set(false);
    open.forEach(t -> {
      try {
        t.close();
      } catch (RuntimeException e) {
        // a test left a log failed on purpose
      }
    });
  }

  private void close(Tsdb t) {
    t.close();
    open.remove(t);
  }

  private static Labels series(int s) {
    return Labels.of("__name__", "m", "s", String.valueOf(s));
  }

  /** In order: every series at every 10 s of [from, to); returns (series → time → value). */
  private static void inOrder(Tsdb t, int series, long from, long to, Map<Labels, TreeMap<Long, Double>> acked) {
    Appender app = t.head("a").appender();
    for (long ts = from; ts < to; ts += 10_000) {
      for (int s = 0; s < series; s++) {
        app.add(app.series(series(s)), ts, ts + s);
      }
      CommitResult r = app.commit(true);
      assertThat(r.rejections()).isEmpty();
      for (int s = 0; s < series; s++) {
        acked.computeIfAbsent(series(s), k -> new TreeMap<>()).put(ts, (double) ts + s);
      }
    }
  }

  /**
   * Out of order: every series at {@code to - 15 s}, {@code to - 25 s}, ... down to {@code from}
   * (between the in-order samples of {@link #inOrder} up to the same {@code to}), newest first.
   */
  private static int outOfOrder(Tsdb t, int series, long from, long to, Map<Labels, TreeMap<Long, Double>> acked) {
    Appender app = t.head("a").appender();
    int stored = 0;
    for (long ts = to - 15_000; ts >= from; ts -= 10_000) {
      for (int s = 0; s < series; s++) {
        app.add(app.series(series(s)), ts, ts + s);
      }
      CommitResult r = app.commit(true);
      assertThat(r.rejections()).isEmpty();
      assertThat(r.outOfOrder()).isEqualTo(series);
      stored += r.outOfOrder();
      for (int s = 0; s < series; s++) {
        acked.computeIfAbsent(series(s), k -> new TreeMap<>()).put(ts, (double) ts + s);
      }
    }
    return stored;
  }

  private static Map<Labels, TreeMap<Long, Double>> read(Tsdb t) {
    Map<Labels, TreeMap<Long, Double>> got = new TreeMap<>();
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
      TreeMap<Long, Double> m = new TreeMap<>();
      for (int i = 0; i < samples.size(); i++) {
        assertThat(m.put(samples.timestamps()[i], samples.values()[i])).as("each timestamp once").isNull();
      }
      got.put(s.labels(), m);
    }
    return got;
  }

  @Test
  void outOfOrderSamplesAreLoggedToTheWblAndReplayedAfterTheWal() throws Exception {
    Tsdb t = openTsdb();
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    inOrder(t, 5, 0, 100_000, acked);
    assertThat(Files.exists(dir.resolve("tsdb/a/wbl"))).as("no WBL before an out-of-order sample").isFalse();
    int ooo = outOfOrder(t, 5, 0, 100_000, acked);
    assertThat(ooo).isEqualTo(45);
    assertThat(Wal.segments(dir.resolve("tsdb/a/wbl"))).isNotEmpty();
    assertThat(read(t)).isEqualTo(acked);
    close(t);

    Tsdb again = openTsdb();
    assertThat(read(again)).as("in-order and out-of-order samples after a restart").isEqualTo(acked);
    // re-sent after the restart: duplicates, nothing refused, nothing doubled
    Map<Labels, TreeMap<Long, Double>> resent = new TreeMap<>();
    Appender app = again.head("a").appender();
    app.add(app.series(series(0)), 45_000, 45_000);
    CommitResult r = app.commit(true);
    assertThat(r.duplicates()).isEqualTo(1);
    assertThat(r.rejections()).isEmpty();
    outOfOrder(again, 1, 100_000, 100_000, resent); // nothing: the range is empty
    assertThat(read(again)).isEqualTo(acked);
  }

  @Test
  void aSeriesWithOnlyOutOfOrderSamplesSurvivesReplayAndCheckpoints() throws Exception {
    Tsdb t = openTsdb();
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    inOrder(t, 1, 0, 400_000, acked);
    // series 7 is new; its sample is older than the in-order bound (max - range/2): out of order
    Appender app = t.head("a").appender();
    app.add(app.series(series(7)), 300_000, 7);
    assertThat(app.commit(true).outOfOrder()).isEqualTo(1);
    acked.put(series(7), new TreeMap<>(Map.of(300_000L, 7.0)));
    t.compactAll(); // in-order compaction and a WAL checkpoint; series 7 stays in the head
    close(t);
    Tsdb again = openTsdb();
    assertThat(read(again).get(series(7))).isEqualTo(acked.get(series(7)));
    assertThat(read(again)).isEqualTo(acked);
  }

  @Test
  void compactionWritesOutOfOrderBlocksTruncatesTheWblAndQueriesReturnEachSampleOnce() throws Exception {
    Tsdb t = openTsdb();
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    inOrder(t, 4, 0, 200_000, acked);
    outOfOrder(t, 4, 60_000, 200_000, acked); // reaches back into older ranges and into the head's range
    t.compactAll();
    TenantDb db = t.tenant("a");
    List<Block> ooo = db.blocks().stream().filter(OooCompaction::isOutOfOrderBlock).toList();
    assertThat(ooo).extracting(b -> b.meta().minTime()).containsExactlyInAnyOrder(60_000L, 120_000L, 180_000L);
    assertThat(ooo.stream().mapToLong(b -> b.meta().numSamples()).sum()).isEqualTo(4 * 13);
    assertThat(registry.get("weir.tsdb.out.of.order.compactions").counter().count()).isEqualTo(3);
    assertThat(Wal.segments(dir.resolve("tsdb/a/wbl"))).as("older WBL segments deleted").hasSize(1);
    assertThat(Files.size(Wal.segmentPath(dir.resolve("tsdb/a/wbl"), Wal.segments(dir.resolve("tsdb/a/wbl"))
        .get(0)))).isZero();
    assertThat(read(t)).isEqualTo(acked);

    close(t);
    Tsdb again = openTsdb();
    assertThat(read(again)).as("after a restart: blocks, head, nothing twice").isEqualTo(acked);
    // the out-of-order block of the head's range [180 s, 240 s) does not raise the head's lower bound
    Appender app = again.head("a").appender();
    app.add(app.series(series(0)), 200_000, 200_000);
    CommitResult r = app.commit(true);
    assertThat(r.rejections()).isEmpty();
    assertThat(r.outOfOrder()).isZero();
    acked.get(series(0)).put(200_000L, 200_000.0);
    assertThat(read(again)).isEqualTo(acked);
  }

  @Test
  void flushCompactsTheOutOfOrderHeadToo() throws Exception {
    Tsdb t = openTsdb();
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    inOrder(t, 2, 0, 50_000, acked);
    outOfOrder(t, 2, 0, 50_000, acked);
    assertThat(t.flushAll()).isEqualTo(2); // one in-order block, one out-of-order block of [0, 60 s)
    assertThat(t.tenant("a").head().numSeries()).isZero();
    assertThat(read(t)).isEqualTo(acked);
  }

  @Test
  void aFailedWblFsyncRefusesWritesAndFailsReadinessAndSync() throws Exception {
    Tsdb t = openTsdb();
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    inOrder(t, 1, 0, 50_000, acked);
    outOfOrder(t, 1, 20_000, 50_000, acked); // opens the WBL
    wblFaults.fsyncFails.set(true);
    Appender app = t.head("a").appender();
    app.add(app.series(series(0)), 12_000, 1);
    assertThatThrownBy(() -> app.commit(true)).isInstanceOf(ServerErrorException.class);
    wblFaults.fsyncFails.set(false);
    assertThat(t.walFailure()).startsWith("WBL (out-of-order write-behind log) of tenant a failed");
    assertThat(t.notReadyReason()).isEqualTo(t.walFailure());
    assertThat(t.failedWals()).isEqualTo(1);
    assertThatThrownBy(t::sync).as("the Kafka reader must not commit").isInstanceOf(ServerErrorException.class);
    app.add(app.series(series(0)), 13_000, 1);
    assertThatThrownBy(() -> app.commit(true)).as("sticky").isInstanceOf(ServerErrorException.class);
  }
}
