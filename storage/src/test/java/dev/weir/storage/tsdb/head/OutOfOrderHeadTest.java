package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.XorIterator;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class OutOfOrderHeadTest {
  private static final long RANGE = 7_200_000L;
  private static final Labels A = Labels.of("__name__", "m", "s", "a");
  private static final Labels B = Labels.of("__name__", "m", "s", "b");
  private final AtomicLong window = new AtomicLong(600_000);
  private final TenantHead head = newHead(new HeadConfig(RANGE, 120, 4));

  private TenantHead newHead(HeadConfig cfg) {
    TenantHead h = new TenantHead("t", cfg, HeadOptions.inMemory(() -> 1_000));
    h.outOfOrderWindow(window::get);
    return h;
  }

  private CommitResult append(Labels l, long t, double v) {
    Appender app = head.appender();
    app.add(app.series(l), t, v);
    return app.commit(false);
  }

  private List<RejectReason> reasons(CommitResult r) {
    return r.rejections().stream().map(Rejection::reason).toList();
  }

  private SeriesChunks series(Labels l) {
    List<Matcher> ms = new ArrayList<>();
    l.forEach((n, v) -> ms.add(Matcher.eq(n, v)));
    List<SeriesChunks> found = head.select(Long.MIN_VALUE, Long.MAX_VALUE, ms);
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  private TreeMap<Long, Double> samples(Labels l) {
    SeriesChunks.Samples s = series(l).samples(Long.MIN_VALUE, Long.MAX_VALUE);
    TreeMap<Long, Double> out = new TreeMap<>();
    for (int i = 0; i < s.size(); i++) {
      assertThat(out.put(s.timestamps()[i], s.values()[i])).as("timestamp %d once", s.timestamps()[i]).isNull();
      if (i > 0) {
        assertThat(s.timestamps()[i]).isGreaterThan(s.timestamps()[i - 1]);
      }
    }
    return out;
  }

  @Test
  void withoutAWindowAnOlderSampleIsStillOutOfOrder() {
    window.set(0);
    append(A, 100_000, 1);
    CommitResult r = append(A, 90_000, 2);
    assertThat(reasons(r)).containsExactly(RejectReason.OUT_OF_ORDER);
    assertThat(samples(A)).containsOnlyKeys(100_000L);
  }

  @Test
  void aSampleWithinTheWindowIsStoredAndMergedInTimeOrder() {
    append(A, 100_000, 1);
    append(A, 200_000, 2);
    CommitResult r = append(A, 150_000, 1.5);
    assertThat(r.appended()).isEqualTo(1);
    assertThat(r.outOfOrder()).isEqualTo(1);
    assertThat(r.rejections()).isEmpty();
    append(A, 50_000, 0.5);
    append(A, 300_000, 3); // in order again afterwards
    assertThat(samples(A)).containsExactly(java.util.Map.entry(50_000L, 0.5), java.util.Map.entry(100_000L, 1.0),
        java.util.Map.entry(150_000L, 1.5), java.util.Map.entry(200_000L, 2.0), java.util.Map.entry(300_000L, 3.0));
    assertThat(head.maxTime()).isEqualTo(300_000);
    assertThat(head.minTime()).as("the in-order range drives compaction").isEqualTo(100_000);
  }

  @Test
  void theWindowIsMeasuredFromTheNewestSampleOfTheTenantInclusive() {
    append(A, 1_900_000, 1);
    append(B, 2_000_000, 1); // another series moves the head's newest time
    assertThat(append(A, 2_000_000 - 600_000, 2).outOfOrder()).as("exactly at the window's edge").isEqualTo(1);
    CommitResult tooOld = append(A, 2_000_000 - 600_001, 3);
    assertThat(reasons(tooOld)).containsExactly(RejectReason.TOO_OLD);
    assertThat(tooOld.rejections().get(0).message()).contains("out-of-order time window");
    assertThat(samples(A)).containsOnlyKeys(1_400_000L, 1_900_000L);
  }

  @Test
  void theFirstCommitIntoAnEmptyHeadMayCarryOutOfOrderSamples() {
    // a replayed Kafka record: the head is empty, the series' newest sample comes first
    Appender app = head.appender();
    MemSeries a = app.series(A);
    app.add(a, 1_000_000, 1);
    app.add(a, 1_000_000 - 600_000, 0.5); // the window is measured from the commit's newest sample
    app.add(a, 1_000_000 - 600_001, 0.4);
    CommitResult r = app.commit(false);
    assertThat(r.outOfOrder()).isEqualTo(1);
    assertThat(reasons(r)).containsExactly(RejectReason.TOO_OLD);
    assertThat(samples(A)).containsOnlyKeys(400_000L, 1_000_000L);
  }

  @Test
  void aNewSeriesOlderThanTheInOrderBoundGoesToTheOutOfOrderHead() {
    append(A, 10_000_000, 1);
    // B is new, but older than max - range/2 (the in-order out-of-bounds rule): within the window.
    long t = 10_000_000 - 500_000;
    window.set(RANGE);
    CommitResult r = append(B, t - RANGE / 2, 1);
    assertThat(r.outOfOrder()).isEqualTo(1);
    assertThat(samples(B)).containsOnlyKeys(t - RANGE / 2);
  }

  @Test
  void duplicatesAreSilentAndConflictingValuesAreRefusedAlsoAgainstOutOfOrderData() {
    append(A, 100_000, 1);
    append(A, 200_000, 2);
    append(A, 150_000, 1.5);
    CommitResult same = append(A, 150_000, 1.5);
    assertThat(same.duplicates()).isEqualTo(1);
    assertThat(same.appended()).isZero();
    assertThat(reasons(append(A, 150_000, 9))).containsExactly(RejectReason.DUPLICATE_TIMESTAMP);
    // An older in-order sample sent again, and one with another value.
    assertThat(append(A, 100_000, 1).duplicates()).isEqualTo(1);
    assertThat(reasons(append(A, 100_000, 7))).containsExactly(RejectReason.DUPLICATE_TIMESTAMP);
    assertThat(samples(A)).containsOnlyKeys(100_000L, 150_000L, 200_000L).containsEntry(150_000L, 1.5)
        .containsEntry(100_000L, 1.0);
  }

  @Test
  void samplesOfTheSameCommitAreCheckedAgainstEachOther() {
    append(A, 500_000, 5);
    Appender app = head.appender();
    MemSeries a = app.series(A);
    app.add(a, 600_000, 6); // in order
    app.add(a, 400_000, 4); // out of order
    app.add(a, 400_000, 4); // identical: duplicate
    app.add(a, 400_000, 44); // conflicting: refused
    app.add(a, 450_000, 4.5); // out of order
    CommitResult r = app.commit(false);
    assertThat(r.appended()).isEqualTo(3);
    assertThat(r.outOfOrder()).isEqualTo(2);
    assertThat(r.duplicates()).isEqualTo(1);
    assertThat(reasons(r)).containsExactly(RejectReason.DUPLICATE_TIMESTAMP);
    assertThat(samples(A)).containsOnlyKeys(400_000L, 450_000L, 500_000L, 600_000L).containsEntry(400_000L, 4.0);
  }

  @Test
  void anOutOfOrderChunkHoldsAtMostTheCapacityThenIsCut() {
    append(A, 1_000_000, 0);
    for (int i = 0; i < 10; i++) {
      assertThat(append(A, 1_000_000 - 1_000 * (i + 1), i).outOfOrder()).isEqualTo(1);
    }
    SeriesChunks s = series(A);
    // 1 in-order chunk, 10 out-of-order samples in chunks of at most 4 (cap), all overlapping nothing wrong
    assertThat(s.chunks()).hasSize(1 + 3);
    assertThat(s.chunks()).allSatisfy(c -> assertThat(XorIterator.numSamples(c.bytes())).isLessThanOrEqualTo(4));
    assertThat(samples(A)).hasSize(11);
  }

  @Test
  void randomArrivalOrderWithinTheWindowReadsBackAsTheSortedSet() {
    Random rnd = new Random(17);
    List<Long> ts = new ArrayList<>();
    for (long t = 0; t < 500; t++) {
      ts.add(1_000_000 + t * 1_000);
    }
    Collections.shuffle(ts, rnd);
    TreeMap<Long, Double> expected = new TreeMap<>();
    int acked = 0;
    for (long t : ts) {
      CommitResult r = append(A, t, t / 1000.0);
      if (r.appended() == 1) {
        expected.put(t, t / 1000.0);
        acked++;
      } else {
        assertThat(reasons(r)).containsExactly(RejectReason.TOO_OLD);
        assertThat(t).isLessThan(head.maxTime() - window.get());
      }
      if (rnd.nextInt(10) == 0) { // re-sends are duplicates
        assertThat(append(A, t, t / 1000.0).rejections()).isEmpty();
      }
    }
    assertThat(acked).isEqualTo(500); // the whole span (500 s) is inside the 10-minute window
    assertThat(samples(A)).isEqualTo(expected);
  }

  @Test
  void nonOverlappingChunksMergeOverlapsForChunkReaders() {
    append(A, 100_000, 1);
    append(A, 200_000, 2);
    append(A, 300_000, 3);
    append(A, 150_000, 1.5);
    append(A, 250_000, 2.5);
    SeriesChunks raw = series(A);
    SeriesChunks fixed = NonOverlappingChunks.of(raw);
    for (int i = 1; i < fixed.chunks().size(); i++) {
      assertThat(fixed.chunks().get(i).minTime()).isGreaterThan(fixed.chunks().get(i - 1).maxTime());
    }
    List<Long> seen = new ArrayList<>();
    for (ChunkData c : fixed.chunks()) {
      XorIterator it = new XorIterator(c.bytes());
      while (it.next()) {
        seen.add(it.timestamp());
      }
    }
    assertThat(seen).containsExactly(100_000L, 150_000L, 200_000L, 250_000L, 300_000L);
    SeriesChunks plain = new SeriesChunks(A, List.of(raw.chunks().get(0)));
    assertThat(NonOverlappingChunks.of(plain)).isSameAs(plain);
  }

  @Test
  void aSeriesWithOnlyOutOfOrderSamplesIsFoundByLabelQueries() {
    append(A, 1_000_000, 1);
    append(B, 990_000, 1); // a new series, in order
    Appender app = head.appender();
    app.add(app.series(Labels.of("__name__", "m", "s", "c")), 1_000_000 - RANGE / 2 - 1, 1);
    window.set(RANGE);
    CommitResult r = app.commit(false);
    assertThat(r.outOfOrder()).isEqualTo(1);
    assertThat(head.labelValues("s", -3_000_000, -2_000_000, List.of(Matcher.eq("__name__", "m"))))
        .containsExactly("c");
    assertThat(head.labelValues("s", 0, 2_000_000, List.of(Matcher.eq("__name__", "m")))).containsExactly("a", "b");
  }
}
