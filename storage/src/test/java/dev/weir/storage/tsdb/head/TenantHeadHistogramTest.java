package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalMetrics;
import dev.weir.storage.tsdb.wal.WalReader;
import dev.weir.storage.tsdb.wal.WalRecords;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Native histogram samples in the head: append rules, chunks, WAL and replay. */
class TenantHeadHistogramTest {
  private final AtomicLong wall = new AtomicLong(1_000);
  private final TenantHead head = newHead();

  private TenantHead newHead() {
    return new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
  }

  /** A cumulative integer histogram after {@code n} observations of 1, 2 and 4 each. */
  static NativeHistogram ints(int n) {
    return new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN, 0, 1e-128, 0, 3.0 * n, 7.0 * n,
        new int[] {1, 3}, new double[] {n, n, n}, new int[0], new double[0], new double[0]);
  }

  static NativeHistogram floats(double x) {
    return new NativeHistogram(true, NativeHistogram.RESET_GAUGE, 2, 0.001, 0.5, 1.5 + x, 9.25 * x,
        new int[] {-2, 2}, new double[] {x, 1}, new int[0], new double[0], new double[0]);
  }

  private CommitResult appendH(TenantHead h, Labels l, long t, NativeHistogram v) {
    Appender app = h.appender();
    app.addHistogram(app.series(l), t, v);
    return app.commit(false);
  }

  private static SeriesChunks only(TenantHead h, Labels l) {
    List<SeriesChunks> found = h.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("__name__",
        l.get("__name__"))));
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  @Test
  void storesIntegerAndFloatHistogramsInHistogramChunks() {
    Labels a = Labels.of("__name__", "a");
    Labels b = Labels.of("__name__", "b");
    for (int i = 1; i <= 200; i++) {
      assertThat(appendH(head, a, i * 1000L, ints(i)).appended()).isEqualTo(1);
      assertThat(appendH(head, b, i * 1000L, floats(i)).appended()).isEqualTo(1);
    }
    SeriesChunks sa = only(head, a);
    assertThat(sa.chunks()).allSatisfy(c -> assertThat(c.encoding()).isEqualTo(Chunks.HISTOGRAM));
    assertThat(sa.chunks()).hasSizeGreaterThan(1); // 120 samples per chunk at most
    SeriesChunks.Histograms ha = sa.histograms(Long.MIN_VALUE, Long.MAX_VALUE);
    assertThat(ha.size()).isEqualTo(200);
    for (int i = 0; i < 200; i++) {
      assertThat(ha.timestamps()[i]).isEqualTo((i + 1) * 1000L);
      assertThat(HistogramHead.sameValue(ha.histograms()[i], ints(i + 1))).as("sample %d", i).isTrue();
    }
    assertThat(sa.samples(Long.MIN_VALUE, Long.MAX_VALUE).size()).isZero();
    SeriesChunks sb = only(head, b);
    assertThat(sb.chunks()).allSatisfy(c -> assertThat(c.encoding()).isEqualTo(Chunks.FLOAT_HISTOGRAM));
    SeriesChunks.Histograms hb = sb.histograms(50_000, 60_000);
    assertThat(hb.size()).isEqualTo(11);
    assertThat(hb.histograms()[0]).isEqualTo(floats(50));
  }

  @Test
  void checksHistogramsLikeFloats() {
    Labels l = Labels.of("__name__", "h");
    appendH(head, l, 100, ints(2));
    assertThat(appendH(head, l, 99, ints(1)).rejections()).singleElement().satisfies(r -> {
      assertThat(r.reason()).isEqualTo(RejectReason.OUT_OF_ORDER);
      assertThat(r.histogram()).isTrue();
      assertThat(r.message()).contains("histogram count=3.0");
    });
    CommitResult other = appendH(head, l, 100, ints(3));
    assertThat(other.rejections()).singleElement().extracting(Rejection::reason)
        .isEqualTo(RejectReason.DUPLICATE_TIMESTAMP);
    CommitResult same = appendH(head, l, 100, ints(2));
    assertThat(same.rejections()).isEmpty();
    assertThat(same.duplicates()).isEqualTo(1);
    assertThat(same.appended()).isZero();
    // A float at the histogram's timestamp is another value, not a duplicate.
    Appender app = head.appender();
    app.add(app.series(l), 100, 6.0);
    assertThat(app.commit(false).rejections()).singleElement().extracting(Rejection::reason)
        .isEqualTo(RejectReason.DUPLICATE_TIMESTAMP);
    assertThat(only(head, l).histograms(0, 1_000).size()).isEqualTo(1);
  }

  @Test
  void reReadHistogramsOlderThanTheNewestAreDuplicates() {
    Labels l = Labels.of("__name__", "h");
    for (int i = 1; i <= 5; i++) {
      appendH(head, l, i * 10L, ints(i));
    }
    // Sent again with another reset hint (a chunk does not keep hints): still the same sample.
    NativeHistogram again = new NativeHistogram(false, NativeHistogram.RESET_NO, 0, 1e-128, 0, 9, 21,
        new int[] {1, 3}, new double[] {3, 3, 3}, new int[0], new double[0], new double[0]);
    CommitResult r = appendH(head, l, 30, again);
    assertThat(r.duplicates()).isEqualTo(1);
    assertThat(r.rejections()).isEmpty();
    assertThat(appendH(head, l, 30, ints(4)).rejections()).singleElement().extracting(Rejection::reason)
        .isEqualTo(RejectReason.OUT_OF_ORDER);
  }

  @Test
  void aSeriesSwitchingBetweenFloatsAndHistogramsCutsChunks() {
    Labels l = Labels.of("__name__", "mixed");
    Appender app = head.appender();
    MemSeries s = app.series(l);
    app.add(s, 1, 1.0);
    app.add(s, 2, 2.0);
    app.addHistogram(s, 3, ints(1));
    app.addHistogram(s, 4, floats(1)); // integer to float histogram: another encoding, another chunk
    app.add(s, 5, 5.0);
    assertThat(app.commit(false).appended()).isEqualTo(5);
    SeriesChunks sc = only(head, l);
    assertThat(sc.chunks()).extracting(ChunkData::encoding)
        .containsExactly(Chunks.XOR, Chunks.HISTOGRAM, Chunks.FLOAT_HISTOGRAM, Chunks.XOR);
    assertThat(sc.samples(0, 10).timestamps()).containsExactly(1, 2, 5);
    assertThat(sc.histograms(0, 10).timestamps()).containsExactly(3, 4);
  }

  @Test
  void logsHistogramsToTheWalAndReplaysThemInCommitOrder(@TempDir Path dir) throws Exception {
    Labels l = Labels.of("__name__", "h");
    Labels f = Labels.of("__name__", "f");
    TenantHead logged = newHead();
    try (Wal wal = Wal.open(dir, 1L << 30, Wal.DEFAULT_OPENER, WalMetrics.noop(), "t")) {
      logged.attachWal(wal);
      for (int i = 1; i <= 150; i++) {
        Appender app = logged.appender();
        // Histogram before float in one commit, for one series: replay must keep the order.
        app.addHistogram(app.series(l), i * 10L, i % 2 == 0 ? ints(i) : floats(i));
        app.add(app.series(l), i * 10L + 5, i);
        app.add(app.series(f), i * 10L, i);
        app.commit(true);
      }
    }
    TenantHead replayed = replay(dir);
    SeriesChunks got = only(replayed, l);
    SeriesChunks want = only(logged, l);
    assertThat(got.histograms(0, Long.MAX_VALUE).size()).isEqualTo(150);
    assertThat(got.samples(0, Long.MAX_VALUE).size()).isEqualTo(150);
    assertThat(got.histograms(0, Long.MAX_VALUE).histograms())
        .containsExactly(want.histograms(0, Long.MAX_VALUE).histograms());
    assertThat(only(replayed, f).samples(0, Long.MAX_VALUE).size()).isEqualTo(150);
  }

  @Test
  void checkpointsKeepHistograms(@TempDir Path dir) throws Exception {
    Labels l = Labels.of("__name__", "h");
    TenantHead logged = newHead();
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, WalMetrics.noop(), "t")) {
      logged.attachWal(wal);
      for (int i = 1; i <= 100; i++) {
        appendH(logged, l, i * 10L, ints(i));
      }
      int closed = wal.roll();
      appendH(logged, l, 2_000, ints(101)); // after the checkpoint
      // Samples before 500 are in a block: the checkpoint drops them.
      Checkpoint.create(dir, closed, ref -> true, 500, WalMetrics.noop(), "t");
    }
    assertThat(Checkpoint.latest(dir)).isNotNull();
    SeriesChunks.Histograms got = only(replay(dir), l).histograms(0, Long.MAX_VALUE);
    assertThat(got.size()).isEqualTo(52); // 500..1000 and 2000
    assertThat(got.timestamps()[0]).isEqualTo(500);
    assertThat(HistogramHead.sameValue(got.histograms()[51], ints(101))).isTrue();
  }

  private TenantHead replay(Path dir) throws Exception {
    TenantHead r = newHead();
    r.beginReplay();
    WalReader.replay(dir, new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        r.replaySeries(ref, labels);
      }

      @Override
      public void sample(int ref, long t, double v) {
        assertThat(r.replaySample(ref, t, v)).isTrue();
      }

      @Override
      public void histogram(int ref, long t, NativeHistogram h) {
        assertThat(r.replayHistogram(ref, t, h)).isTrue();
      }
    }, false, WalMetrics.noop(), "t");
    r.finishReplay();
    return r;
  }
}
