package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.testing.FaultyChannel;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.RejectReason;
import dev.weir.storage.tsdb.head.Rejection;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TsdbTest {
  static final long RANGE = 60_000;
  @TempDir Path dir;
  private final List<Tsdb> open = new ArrayList<>();
  private int seriesLimit;
  private final FaultyChannel.Faults faults = new FaultyChannel.Faults();
  /** The registry of the Tsdb opened last. */
  private SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private Tsdb openTsdb(Duration retention) throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120)).withRetention(retention)
        .withWalSegmentBytes(8 * 1024).withChannelOpener(faults::open);
    registry = new SimpleMeterRegistry();
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(registry), () -> 1_000, tenant -> () -> seriesLimit);
    t.open();
    open.add(t);
    return t;
  }

  @AfterEach
  void closeAll() {
    faults.fsyncFails.set(false);
    open.forEach(t -> {
      try {
        t.close();
      } catch (RuntimeException e) {
        // a test left a WAL failed on purpose
      }
    });
  }

  private double meter(String name) {
    return registry.get(name).meter().measure().iterator().next().getValue();
  }

  private void close(Tsdb t) {
    t.close();
    open.remove(t);
  }

  /** Appends {@code series} series at every second in [from, to), time-major; returns what it wrote. */
  static Map<Labels, List<Long>> write(Tsdb t, String tenant, int series, long from, long to) {
    Map<Labels, List<Long>> wrote = new TreeMap<>();
    Appender app = t.head(tenant).appender();
    for (long ts = from; ts < to; ts += 1000) {
      for (int s = 0; s < series; s++) {
        Labels l = Labels.of("__name__", "m", "s", String.valueOf(s));
        app.add(app.series(l), ts, ts / 1000.0 + s);
        wrote.computeIfAbsent(l, k -> new ArrayList<>()).add(ts);
      }
      CommitResult r = app.commit(true);
      assertThat(r.rejections()).isEmpty();
    }
    return wrote;
  }

  static Map<Labels, List<Long>> read(Tsdb t, String tenant) {
    Map<Labels, List<Long>> got = new TreeMap<>();
    for (SeriesChunks s : t.tenant(tenant).select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
      List<Long> ts = new ArrayList<>();
      for (int i = 0; i < samples.size(); i++) {
        ts.add(samples.timestamps()[i]);
        assertThat(samples.values()[i]).isEqualTo(samples.timestamps()[i] / 1000.0
            + Integer.parseInt(s.labels().get("s")));
      }
      got.put(s.labels(), ts);
    }
    return got;
  }

  @Test
  void restartReplaysTheWalExactly() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> a = write(t, "a", 20, 0, 50_000);
    Map<Labels, List<Long>> b = write(t, "b", 3, 10_000, 20_000);
    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(again.tenants()).containsExactly("a", "b");
    assertThat(read(again, "a")).isEqualTo(a);
    assertThat(read(again, "b")).isEqualTo(b);
    // Appends continue after the replay with the same series.
    write(again, "a", 20, 50_000, 51_000);
    assertThat(read(again, "a").values()).allSatisfy(ts -> assertThat(ts).hasSize(51));
  }

  /**
   * A replay reads ASCII series records as the label bytes the head keeps and the others as
   * strings: after a restart both kinds are found by a push of the same labels (no second series),
   * by matchers, and by label values.
   */
  @Test
  void restartKeepsAsciiAndNonAsciiSeriesFindableByLabelsAndMatchers() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    List<Labels> all = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      all.add(Labels.of("__name__", "m", "city", i % 2 == 0 ? "z\u00fcrich-" + i : "basel-" + i, "empty", "", "i",
          String.valueOf(i)));
    }
    Appender app = t.head("a").appender();
    for (Labels l : all) {
      app.add(app.series(l), 1_000, 1);
    }
    assertThat(app.commit(true).rejections()).isEmpty();
    close(t);

    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(again.head("a").numSeries()).isEqualTo(50);
    Appender more = again.head("a").appender();
    for (Labels l : all) {
      more.add(more.series(l), 2_000, 2);
    }
    assertThat(more.commit(true).rejections()).isEmpty();
    assertThat(again.head("a").numSeries()).as("the same series, not new ones").isEqualTo(50);
    List<SeriesChunks> found = again.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE,
        List.of(dev.weir.storage.tsdb.labels.Matcher.eq("city", "z\u00fcrich-4")));
    assertThat(found).extracting(SeriesChunks::labels).containsExactly(all.get(4));
    assertThat(found.get(0).samples(Long.MIN_VALUE, Long.MAX_VALUE).size()).isEqualTo(2);
    found = again.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE,
        List.of(dev.weir.storage.tsdb.labels.Matcher.eq("city", "basel-5")));
    assertThat(found).extracting(SeriesChunks::labels).containsExactly(all.get(5));
    assertThat(again.head("a").labelValues("city", Long.MIN_VALUE, Long.MAX_VALUE, List.of())).hasSize(50)
        .contains("z\u00fcrich-0", "basel-49");
  }

  @Test
  void histogramsGoThroughCompactionCheckpointAndRestart() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    List<dev.weir.storage.tsdb.chunk.NativeHistogram> wrote = new ArrayList<>();
    Labels l = Labels.of("__name__", "h");
    for (long ts = 0; ts < 300_000; ts += 1000) {
      int n = (int) (ts / 1000);
      dev.weir.storage.tsdb.chunk.NativeHistogram h = new dev.weir.storage.tsdb.chunk.NativeHistogram(n % 3 == 0, 0,
          2, 0.001, 1, 1 + 3.0 * n, n, new int[] {-1, 3}, new double[] {n, n, n}, new int[0], new double[0],
          new double[0]);
      Appender app = t.head("a").appender();
      app.addHistogram(app.series(l), ts, h);
      assertThat(app.commit(true).appended()).isEqualTo(1);
      wrote.add(h);
    }
    t.compactAll();
    assertThat(t.tenant("a").blocks()).hasSize(4);
    close(t);
    Tsdb again = openTsdb(Duration.ZERO); // blocks plus the checkpointed and replayed WAL
    List<dev.weir.storage.tsdb.chunk.NativeHistogram> got = new ArrayList<>();
    List<Long> times = new ArrayList<>();
    for (SeriesChunks s : again.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      SeriesChunks.Histograms hs = s.histograms(Long.MIN_VALUE, Long.MAX_VALUE);
      got.addAll(List.of(hs.histograms()));
      for (long x : hs.timestamps()) {
        times.add(x);
      }
    }
    assertThat(times).as("%s", times).hasSize(300);
    assertThat(times.get(299)).isEqualTo(299_000L);
    for (int i = 0; i < 300; i++) {
      assertThat(dev.weir.storage.tsdb.chunk.HistogramValues.sameValue(got.get(i), wrote.get(i))).as("sample %d", i)
          .isTrue();
    }
  }

  @Test
  void compactionWritesBlocksTruncatesTheHeadAndCheckpointsTheWal() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> wrote = write(t, "a", 10, 0, 300_000);
    assertThat(Wal.segments(dir.resolve("tsdb/a/wal")).size()).isGreaterThan(3);
    t.compactAll();
    TenantDb db = t.tenant("a");
    assertThat(db.blocks()).extracting(b -> b.meta().minTime()).containsExactly(0L, 60_000L, 120_000L, 180_000L);
    assertThat(db.blocks()).allSatisfy(b -> assertThat(b.meta().numSeries()).isEqualTo(10));
    assertThat(db.head().minTime()).isEqualTo(240_000);
    assertThat(read(t, "a")).isEqualTo(wrote);
    assertThat(Checkpoint.latest(dir.resolve("tsdb/a/wal"))).isNotNull();

    Appender app = db.head().appender();
    app.add(app.series(Labels.of("__name__", "m", "s", "fresh")), 100_000, 1);
    assertThat(app.commit(true).rejections()).extracting(Rejection::reason).containsExactly(RejectReason.OUT_OF_BOUNDS);

    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(read(again, "a")).as("after restart every sample exactly once").isEqualTo(wrote);
    assertThat(again.tenant("a").head().minTime()).isEqualTo(240_000);
  }

  @Test
  void startUpRepairsATornWalTailAndKeepsEverythingBeforeIt() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> first = write(t, "a", 5, 0, 10_000);
    write(t, "a", 5, 10_000, 11_000); // the last commit: its record will be torn
    close(t);
    List<Integer> segs = Wal.segments(dir.resolve("tsdb/a/wal"));
    Path last = Wal.segmentPath(dir.resolve("tsdb/a/wal"), segs.get(segs.size() - 1));
    dev.weir.storage.testing.Corrupt.truncate(last, Files.size(last) - 7);
    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(read(again, "a")).isEqualTo(first);
    // Appends go on after the repair; a second restart is clean.
    write(again, "a", 5, 10_000, 12_000);
    close(again);
    assertThat(read(openTsdb(Duration.ZERO), "a").values()).allSatisfy(ts -> assertThat(ts).hasSize(12));
  }

  @Test
  void flushCompactsTheWholeHeadIncludingTheIncompleteLastRange() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> wrote = write(t, "a", 10, 0, 150_000); // 2.5 ranges: periodic compaction keeps 1.5
    write(t, "b", 2, 30_000, 40_000);
    t.compactAll();
    assertThat(t.tenant("a").head().numSeries()).isEqualTo(10);
    assertThat(t.flushAll()).isEqualTo(2 + 1);
    TenantDb db = t.tenant("a");
    assertThat(db.blocks()).extracting(b -> b.meta().minTime()).containsExactly(0L, 60_000L, 120_000L);
    assertThat(db.head().numSeries()).isZero();
    assertThat(t.tenant("b").head().numSeries()).isZero();
    assertThat(read(t, "a")).isEqualTo(wrote);
    close(t);
    assertThat(read(openTsdb(Duration.ZERO), "a")).as("after restart every sample exactly once").isEqualTo(wrote);
  }

  @Test
  void replaySkipsSamplesAlreadyInABlock() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> wrote = write(t, "a", 4, 0, 90_000);
    // A crash after a block was written but before the head was truncated and checkpointed.
    BlockWriter.write(dir.resolve("tsdb/a"), Ulid.random(5), 0, RANGE,
        t.tenant("a").head().select(0, RANGE - 1, List.of()), "");
    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(again.tenant("a").head().minTime()).isEqualTo(RANGE);
    assertThat(read(again, "a")).isEqualTo(wrote);
  }

  @Test
  void retentionDeletesBlocksOlderThanTheNewestDataMinusTheRetention() throws Exception {
    Tsdb t = openTsdb(Duration.ofMinutes(2));
    write(t, "a", 2, 0, 301_000); // newest sample 300s: blocks ending at or before 180s go
    t.compactAll();
    assertThat(t.tenant("a").blocks()).extracting(b -> b.meta().minTime()).containsExactly(180_000L);
    try (var s = Files.list(dir.resolve("tsdb/a"))) {
      assertThat(s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("weir-wal") && !n.equals("wal")))
          .as("block directories left").hasSize(1);
    }
  }

  @Test
  void seriesLimitIsAClientErrorAndExistingSeriesKeepWorking() throws Exception {
    seriesLimit = 2;
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 2, 0, 2_000);
    Appender app = t.head("a").appender();
    assertThatThrownBy(() -> app.series(Labels.of("__name__", "m", "s", "new")))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.reason()).isEqualTo("per_user_series_limit"))
        .hasMessageContaining("per-user series limit of 2");
    write(t, "a", 2, 2_000, 3_000);
  }

  /**
   * A series created from its labels' canonical bytes (a pushed series read without Strings) is
   * the series of those labels: found by labels and by bytes, indexed for queries, in the WAL,
   * counted against the series limit.
   */
  @Test
  void seriesCreatedFromTheirCanonicalBytesAreTheSeriesOfTheirLabels() throws Exception {
    seriesLimit = 3;
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 1, 0, 1_000); // s=0, by labels
    Appender app = t.head("a").appender();
    Labels one = Labels.of("__name__", "m", "s", "1");
    MemSeries fromBytes = app.series(Labels.withWireEncoding(one).wireEncoding(), one.hashCode());
    assertThat(app.series(one)).as("found by labels").isSameAs(fromBytes);
    assertThat(fromBytes.labels()).isEqualTo(one);
    Labels zero = Labels.of("__name__", "m", "s", "0");
    assertThat(app.series(Labels.withWireEncoding(zero).wireEncoding(), zero.hashCode()))
        .as("a series made from labels, found by bytes").isSameAs(app.series(zero));
    app.add(fromBytes, 0, 1);
    assertThat(app.commit(true).rejections()).isEmpty();
    Map<Labels, List<Long>> expected = write(t, "a", 2, 1_000, 3_000);
    expected.get(zero).add(0, 0L);
    expected.get(one).add(0, 0L);
    assertThat(read(t, "a")).isEqualTo(expected);
    assertThat(t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("s", "1"))))
        .as("indexed from its bytes").extracting(SeriesChunks::labels).containsExactly(one);
    Labels two = Labels.of("__name__", "m", "s", "2");
    app.series(Labels.withWireEncoding(two).wireEncoding(), two.hashCode());
    Labels three = Labels.of("__name__", "m", "s", "3");
    assertThatThrownBy(() -> app.series(Labels.withWireEncoding(three).wireEncoding(), three.hashCode()))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.reason()).isEqualTo("per_user_series_limit"))
        .hasMessageContaining("per-user series limit of 3").hasMessageContaining("s=\"3\"");
    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    assertThat(read(again, "a")).as("replayed from the WAL").isEqualTo(expected);
  }

  @Test
  void fullDiskFailsTheCommitWithoutApplyingAnythingAndRecoversWhenSpaceReturns() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> before = write(t, "a", 3, 0, 5_000);
    faults.diskFull.set(true);
    Appender app = t.head("a").appender();
    app.add(app.series(Labels.of("__name__", "m", "s", "0")), 5_000, 5);
    app.add(app.series(Labels.of("__name__", "m", "s", "new")), 5_000, 5);
    assertThatThrownBy(() -> app.commit(true)).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("No space left");
    assertThat(read(t, "a")).as("nothing of the failed batch is visible").isEqualTo(before);
    faults.diskFull.set(false);
    Map<Labels, List<Long>> after = write(t, "a", 3, 5_000, 6_000);
    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> expected = new TreeMap<>(before);
    after.forEach((l, ts) -> expected.get(l).addAll(ts));
    assertThat(read(again, "a")).isEqualTo(expected);
  }

  @Test
  void failedFsyncIsReportedForReadinessAndInMetrics() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 2, 0, 2_000);
    write(t, "b", 2, 0, 2_000);
    assertThat(t.walFailure()).isNull();
    faults.fsyncFails.set(true);
    Appender app = t.head("b").appender();
    app.add(app.series(Labels.of("__name__", "m", "s", "0")), 2_000, 2);
    assertThatThrownBy(() -> app.commit(true)).isInstanceOf(ServerErrorException.class);
    faults.fsyncFails.set(false);
    assertThat(t.walFailure()).startsWith("WAL of tenant b failed").contains("Input/output error");
    assertThat(t.notReadyReason()).isEqualTo(t.walFailure());
    assertThat(meter("weir.tsdb.wal.failed")).isEqualTo(1);
    assertThat(meter("weir.tsdb.wal.fsyncs.failed")).isEqualTo(1);
    assertThatThrownBy(t::sync).as("the Kafka reader must not commit").isInstanceOf(ServerErrorException.class);
    write(t, "a", 2, 2_000, 3_000); // other tenants' WALs are unaffected
  }

  @Test
  void closeClosesEveryTenantEvenWhenOneFails() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    write(t, "a", 1, 0, 1_000);
    write(t, "b", 1, 0, 1_000);
    faults.fsyncFails.set(true);
    assertThatThrownBy(t::close).isInstanceOf(UncheckedIOException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
    open.remove(t);
    assertThat(t.existing("a").wal().failure()).as("a was closed (its fsync attempted)").isNotNull();
    assertThat(t.existing("b").wal().failure()).as("b was closed too").isNotNull();
  }

  @Test
  void aCommitLargerThanTheReadersRecordLimitIsReplayedExactly() throws Exception {
    // 17,000 series with 4 KB label values: ~70 MB of series in one commit, over the 64 MiB the
    // reader accepts per record. Written as one record it would be "damage" at replay.
    int n = 17_000;
    String pad = "x".repeat(4000);
    Tsdb t = openTsdb(Duration.ZERO);
    Appender app = t.head("big").appender();
    for (int i = 0; i < n; i++) {
      app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(i), "pad", pad)), 1_000, i);
    }
    assertThat(app.commit(true).appended()).isEqualTo(n);
    close(t);
    Tsdb again = openTsdb(Duration.ZERO);
    List<SeriesChunks> all = again.tenant("big").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of());
    assertThat(all).hasSize(n);
    assertThat(all).allSatisfy(s -> assertThat(s.samples(0, Long.MAX_VALUE).values()[0])
        .isEqualTo(Integer.parseInt(s.labels().get("s"))));
    assertThat(meter("weir.tsdb.wal.tail.repairs")).isZero();
  }

  @Test
  void corruptionInTheMiddleIsRepairedByDefaultKeepingEverythingBeforeIt() throws Exception {
    Tsdb t = openTsdb(Duration.ZERO);
    int commits = 1200;
    Appender app = t.head("a").appender();
    for (int k = 0; k < commits; k++) {
      for (int s = 0; s < 5; s++) {
        app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(s))), k * 1000L, k + s);
      }
      app.source(10_000 + k); // the Kafka offset this commit came from
      assertThat(app.commit(true).appended()).isEqualTo(5);
    }
    close(t);
    Path walDir = dir.resolve("tsdb/a/wal");
    List<Integer> segs = Wal.segments(walDir);
    assertThat(segs.size()).as("several segments after the damaged one").isGreaterThan(5);
    Path damaged = Wal.segmentPath(walDir, segs.get(2));
    dev.weir.storage.testing.Corrupt.flipByte(damaged, Files.size(damaged) / 2);

    Tsdb again = openTsdb(Duration.ZERO);
    Map<Labels, List<Long>> kept = read(again, "a");
    assertThat(kept).hasSize(5);
    int m = kept.values().iterator().next().size();
    List<Long> prefix = new ArrayList<>();
    for (int k = 0; k < m; k++) {
      prefix.add(k * 1000L);
    }
    assertThat(kept.values()).as("exactly the commits before the corruption").allSatisfy(ts ->
        assertThat(ts).isEqualTo(prefix));
    assertThat(m).isBetween(1, commits - 1);

    ReplayReport report = again.replayReport();
    assertThat(report.repairedCorruption()).isTrue();
    assertThat(report.corruptionRepairedTenants()).containsExactly("a");
    assertThat(report.droppedSegments()).isEqualTo(segs.size() - 3);
    assertThat(report.droppedRecords()).isGreaterThan(0);
    assertThat(report.droppedBytes()).isGreaterThan(0);
    // The damaged record belongs to commit m (or is its SOURCE record): re-reading from the
    // reported offset gets back everything dropped.
    assertThat(report.firstDroppedSourceOffset()).isPresent();
    assertThat(report.firstDroppedSourceOffset().getAsLong()).isBetween(10_000L + m - 1, 10_000L + m);
    assertThat(report.tenants().get("a").damagedSegment()).isEqualTo(damaged);
    assertThat(meter("weir.tsdb.wal.corruptions")).isEqualTo(1);
    assertThat(meter("weir.tsdb.wal.repair.dropped.records")).isEqualTo(report.droppedRecords());
    assertThat(meter("weir.tsdb.wal.repair.dropped.segments")).isEqualTo(segs.size() - 3);
    assertThat(Wal.segments(walDir)).as("later segments deleted; a new one opened")
        .containsExactly(segs.get(0), segs.get(1), segs.get(2), segs.get(2) + 1);

    write(again, "a", 5, commits * 1000L, commits * 1000L + 1000); // appends go on
    close(again);
    Tsdb third = openTsdb(Duration.ZERO);
    assertThat(third.replayReport().repairedCorruption()).as("the repaired WAL is clean").isFalse();
    assertThat(read(third, "a").values()).allSatisfy(ts -> assertThat(ts).hasSize(m + 1));
  }
}
