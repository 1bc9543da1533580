package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.labels.CompactForms;
import dev.weir.storage.tsdb.labels.LabelValues;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalMetrics;
import dev.weir.storage.tsdb.wal.WalPages;
import dev.weir.storage.tsdb.wal.WalReader;
import dev.weir.storage.tsdb.wal.WalRecords;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TenantHeadTest {
  private final AtomicLong wall = new AtomicLong(1_000);
  private final TenantHead head =
      new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));

  private CommitResult append(Labels l, long t, double v) {
    Appender app = head.appender();
    app.add(app.series(l), t, v);
    return app.commit(false);
  }

  private SeriesChunks.Samples samples(Labels l) {
    List<SeriesChunks> found =
        head.select(Long.MIN_VALUE, Long.MAX_VALUE, matchersFor(l));
    assertThat(found).hasSize(1);
    return found.get(0).samples(Long.MIN_VALUE, Long.MAX_VALUE);
  }

  private static List<Matcher> matchersFor(Labels l) {
    List<Matcher> ms = new ArrayList<>();
    l.forEach((n, v) -> ms.add(Matcher.eq(n, v)));
    return ms;
  }

  @Test
  void appendsAndReadsBack() {
    Labels l = Labels.of("__name__", "up", "job", "a");
    for (int i = 0; i < 500; i++) {
      assertThat(append(l, i * 1000L, i).appended()).isEqualTo(1);
    }
    SeriesChunks.Samples s = samples(l);
    assertThat(s.size()).isEqualTo(500);
    assertThat(s.timestamps()[499]).isEqualTo(499_000L);
    assertThat(s.values()[123]).isEqualTo(123.0);
  }

  @Test
  void rejectsOutOfOrderAndDuplicateTimestampButAcceptsIdenticalSampleOnce() {
    Labels l = Labels.of("__name__", "m");
    append(l, 100, 1);
    CommitResult older = append(l, 99, 1);
    assertThat(older.rejections()).singleElement()
        .extracting(Rejection::reason).isEqualTo(RejectReason.OUT_OF_ORDER);
    CommitResult differentValue = append(l, 100, 2);
    assertThat(differentValue.rejections()).singleElement()
        .extracting(Rejection::reason).isEqualTo(RejectReason.DUPLICATE_TIMESTAMP);
    assertThat(differentValue.rejections().get(0).message()).contains("m{}").contains("timestamp=100");
    CommitResult identical = append(l, 100, 1);
    assertThat(identical.rejections()).isEmpty();
    assertThat(identical.duplicates()).isEqualTo(1);
    assertThat(identical.appended()).isZero();
    assertThat(samples(l).size()).isEqualTo(1);
  }

  @Test
  void identicalNanIsADuplicateByBits() {
    Labels l = Labels.of("__name__", "m");
    double stale = Double.longBitsToDouble(0x7ff0000000000002L);
    append(l, 100, stale);
    assertThat(append(l, 100, stale).duplicates()).isEqualTo(1);
    assertThat(append(l, 100, Double.NaN).rejections()).hasSize(1);
  }

  @Test
  void checksSamplesOfOneBatchAgainstEachOther() {
    Labels l = Labels.of("__name__", "m");
    Appender app = head.appender();
    MemSeries s = app.series(l);
    app.add(s, 10, 1);
    app.add(s, 20, 2);
    app.add(s, 15, 3); // older than the batch's own previous sample
    app.add(s, 20, 2); // identical to the batch's previous sample
    CommitResult r = app.commit(false);
    assertThat(r.appended()).isEqualTo(2);
    assertThat(r.duplicates()).isEqualTo(1);
    assertThat(r.rejections()).extracting(Rejection::timestamp).containsExactly(15L);
    assertThat(samples(l).timestamps()).containsExactly(10, 20);
  }

  @Test
  void cutsChunksAtSampleCountAndRangeBoundary() {
    Labels l = Labels.of("__name__", "m");
    for (int i = 0; i < 250; i++) {
      append(l, i, i);
    }
    List<ChunkData> chunks = head.select(0, 1000, matchersFor(l)).get(0).chunks();
    assertThat(chunks).extracting(ChunkData::minTime).containsExactly(0L, 120L, 240L);
    append(l, 7_200_000L, 1); // next 2h window starts a new chunk
    chunks = head.select(0, Long.MAX_VALUE, matchersFor(l)).get(0).chunks();
    assertThat(chunks).extracting(ChunkData::minTime).containsExactly(0L, 120L, 240L, 7_200_000L);
  }

  @Test
  void selectFollowsPrometheusMatcherSemantics() {
    Labels a = Labels.of("__name__", "up", "job", "api", "env", "prod");
    Labels b = Labels.of("__name__", "up", "job", "web");
    Labels c = Labels.of("__name__", "down", "job", "api", "env", "dev");
    for (Labels l : List.of(a, b, c)) {
      append(l, 1, 1);
    }
    assertThat(select(Matcher.eq("__name__", "up"))).containsExactly(a, b);
    assertThat(select(Matcher.eq("env", ""))).containsExactly(b);
    assertThat(select(Matcher.neq("env", "prod"))).containsExactly(c, b);
    assertThat(select(Matcher.re("env", "pr.*|"))).containsExactly(a, b);
    assertThat(select(Matcher.nre("job", "a.*"))).containsExactly(b);
    assertThat(select(Matcher.re("job", ".+"), Matcher.neq("__name__", "down"))).containsExactly(a, b);
    assertThat(select(Matcher.eq("nope", "x"))).isEmpty();
    assertThat(select()).containsExactly(c, a, b);
  }

  @Test
  void selectFiltersByTimeRange() {
    Labels a = Labels.of("__name__", "a");
    Labels b = Labels.of("__name__", "b");
    append(a, 100, 1);
    append(b, 500, 1);
    assertThat(head.select(0, 200, List.of()).stream().map(SeriesChunks::labels)).containsExactly(a);
    List<SeriesChunks> r = head.select(50, 150, List.of(Matcher.re("__name__", ".*")));
    assertThat(r).hasSize(1);
    assertThat(r.get(0).samples(50, 150).timestamps()).containsExactly(100);
    assertThat(r.get(0).samples(101, 150).size()).isZero();
  }

  @Test
  void labelNamesAndValues() {
    append(Labels.of("__name__", "up", "job", "api"), 1, 1);
    append(Labels.of("__name__", "up", "zone", "z1"), 1000, 1);
    assertThat(head.labelNames(Long.MIN_VALUE, Long.MAX_VALUE, List.of()))
        .containsExactly("__name__", "job", "zone");
    assertThat(head.labelNames(500, 2000, List.of())).containsExactly("__name__", "zone");
    assertThat(head.labelValues("job", Long.MIN_VALUE, Long.MAX_VALUE, List.of())).containsExactly("api");
    assertThat(head.labelValues("__name__", 0, 10, List.of(Matcher.eq("job", "api"))))
        .containsExactly("up");
  }

  @Test
  void countsActiveSeriesByWallClock() {
    append(Labels.of("__name__", "a"), 1, 1);
    wall.set(5_000);
    append(Labels.of("__name__", "b"), 1, 1);
    assertThat(head.numSeries()).isEqualTo(2);
    assertThat(head.activeSeries(2_000)).isEqualTo(1);
    assertThat(head.activeSeries(0)).isEqualTo(2);
  }

  @Test
  void concurrentAppendersToSharedSeriesLoseNothing() throws Exception {
    int threads = 4;
    int perThread = 20_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int th = 0; th < threads; th++) {
        int id = th;
        fs.add(pool.submit(() -> {
          Random r = new Random(id);
          Appender app = head.appender();
          for (int i = 0; i < perThread; i++) {
            // Each thread owns a timestamp lane per series so every sample is distinct and
            // in order per thread, while threads share series and create them concurrently.
            Labels l = Labels.of("__name__", "s" + r.nextInt(50), "thread", String.valueOf(id));
            app.add(app.series(l), i, i);
            if (i % 100 == 99) {
              app.commit(false);
            }
          }
          app.commit(false);
        }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    long total = 0;
    for (SeriesChunks s : head.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      total += s.samples(Long.MIN_VALUE, Long.MAX_VALUE).size();
    }
    assertThat(total).isEqualTo((long) threads * perThread);
    assertThat(head.numSeries()).isEqualTo(threads * 50);
  }

  private List<Labels> select(Matcher... ms) {
    return head.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(ms)).stream()
        .map(SeriesChunks::labels).toList();
  }

  /** Payload lengths of the records in a WAL segment. */
  private static List<Integer> recordPayloads(Path segment) throws Exception {
    byte[] bytes = Files.readAllBytes(segment);
    WalPages.Reader r = new WalPages.Reader(java.nio.ByteBuffer.wrap(bytes), 0, bytes.length);
    List<Integer> out = new ArrayList<>();
    for (java.nio.ByteBuffer p = r.next(); p != null; p = r.next()) {
      out.add(p.remaining());
    }
    assertThat(r.damageAt()).as(r.damage()).isEqualTo(-1);
    return out;
  }

  @Test
  void splitsACommitWithManyNewSeriesIntoRecordsUnderTheLimitAndReplaysItExactly(@TempDir Path dir)
      throws Exception {
    int limit = 4096;
    int n = 20_000;
    TenantHead small = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get), limit);
    try (Wal wal = Wal.open(dir, 1L << 30, Wal.DEFAULT_OPENER, WalMetrics.noop(), "t")) {
      small.attachWal(wal);
      Appender app = small.appender();
      for (int i = 0; i < n; i++) {
        app.add(app.series(Labels.of("__name__", "m", "i", "series-" + i)), 1000 + i, i);
      }
      assertThat(app.commit(true).appended()).isEqualTo(n);
    }
    List<Integer> payloads = recordPayloads(Wal.segmentPath(dir, 0));
    assertThat(payloads).hasSizeGreaterThan(20).allSatisfy(len -> assertThat(len).isLessThanOrEqualTo(limit));

    TenantHead replayed = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    replayed.beginReplay();
    WalReader.replay(dir, new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        replayed.replaySeries(ref, labels);
      }

      @Override
      public void sample(int ref, long t, double v) {
        assertThat(replayed.replaySample(ref, t, v)).isTrue();
      }
    }, false, WalMetrics.noop(), "t");
    replayed.finishReplay();
    assertThat(replayed.numSeries()).isEqualTo(n);
    for (int i : new int[] {0, 4_321, n - 1}) {
      List<SeriesChunks> s = replayed.select(0, Long.MAX_VALUE, List.of(Matcher.eq("i", "series-" + i)));
      SeriesChunks.Samples samples = s.get(0).samples(0, Long.MAX_VALUE);
      assertThat(samples.size()).isEqualTo(1);
      assertThat(samples.timestamps()[0]).isEqualTo(1000L + i);
      assertThat(samples.values()[0]).isEqualTo(i);
    }
  }

  @Test
  void reReadingAStoredBatchCountsDuplicatesNotOutOfOrder() {
    Labels a = Labels.of("__name__", "a");
    Labels b = Labels.of("__name__", "b");
    // A Kafka record with several samples per series, then (after a crash) read again.
    for (int round = 0; round < 2; round++) {
      Appender app = head.appender();
      for (long t = 1_000; t <= 3_000; t += 1_000) {
        app.add(app.series(a), t, t / 10.0);
        app.add(app.series(b), t, -t);
      }
      CommitResult r = app.commit(false);
      if (round == 0) {
        assertThat(r.appended()).isEqualTo(6);
      } else {
        assertThat(r.rejections()).as("nothing discarded").isEmpty();
        assertThat(r.duplicates()).isEqualTo(6);
        assertThat(r.appended()).isZero();
      }
    }
    for (int i = 0; i < 300; i++) { // enough to close chunks: duplicates found in closed chunks too
      append(a, 10_000 + i * 1000L, i);
    }
    assertThat(append(a, 2_000, 200.0).duplicates()).isEqualTo(1);
    assertThat(append(a, 10_000 + 5 * 1000L, 5).duplicates()).as("in a closed chunk").isEqualTo(1);
    assertThat(samples(a).size()).isEqualTo(303);
  }

  @Test
  void anOlderSampleWithADifferentValueOrUnknownTimeIsStillOutOfOrder() {
    Labels l = Labels.of("__name__", "m");
    append(l, 100, 1);
    append(l, 200, 2);
    assertThat(append(l, 100, 7).rejections()).extracting(Rejection::reason)
        .containsExactly(RejectReason.OUT_OF_ORDER);
    assertThat(append(l, 150, 1).rejections()).extracting(Rejection::reason)
        .containsExactly(RejectReason.OUT_OF_ORDER);
  }

  @Test
  void truncationDropsTheLabelStringsOfRemovedSeries() {
    TenantHead h = new TenantHead("t", new HeadConfig(60_000L, 120), HeadOptions.inMemory(wall::get));
    Appender app = h.appender();
    for (int i = 0; i < 10_000; i++) { // churn: every series has its own pod
      app.add(app.series(Labels.of("__name__", "m", "pod", "pod-" + i)), 1_000, i);
    }
    app.commit(false);
    assertThat(h.postings().labelValues("pod")).hasSize(10_000);
    long churned = h.memoryBytesEstimate();
    for (int i = 0; i < 10; i++) {
      app.add(app.series(Labels.of("__name__", "m", "pod", "live-" + i)), 70_000, i);
    }
    app.commit(false);
    assertThat(h.truncate(60_000)).isEqualTo(10_000);
    // The postings hold the head's only copy of a label string: the removed series' values go.
    assertThat(h.postings().labelValues("pod")).as("only the live series' values").hasSize(10);
    assertThat(h.memoryBytesEstimate()).isPositive().isLessThan(churned / 100);
    // A removed series that comes back is indexed again.
    app.add(app.series(Labels.of("__name__", "m", "pod", "pod-1")), 80_000, 1);
    app.commit(false);
    assertThat(h.postings().labelValues("pod")).hasSize(11).contains("pod-1");
    assertThat(h.postings().get("pod", "pod-1")).hasSize(1);
  }

  /** Holds what it is given until the test runs it. */
  static final class HeldExecutor implements java.util.concurrent.Executor {
    final List<Runnable> held = new ArrayList<>();

    @Override
    public void execute(Runnable r) {
      held.add(r);
    }

    void runAll() {
      held.forEach(Runnable::run);
      held.clear();
    }
  }

  /**
   * A head replayed from {@code n} series with one sample each at t=1000 (refs 1..n, handed over
   * in pairs out of ref order as concurrent appenders log them) and one series with no sample,
   * finished with {@code builder}, which gets the postings build when {@code backgroundMin} allows.
   */
  private TenantHead replayedHead(int n, java.util.concurrent.Executor builder, int backgroundMin) {
    TenantHead h = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    h.beginReplay();
    for (int i = 1; i <= n; i++) {
      int ref = i % 2 == 1 && i < n ? i + 1 : i % 2 == 0 ? i - 1 : i;
      h.replaySeries(ref, Labels.of("__name__", "m", "i", "s" + ref));
      assertThat(h.replaySample(ref, 1000, ref)).isTrue();
    }
    h.replaySeries(n + 1, Labels.of("__name__", "m", "i", "empty"));
    h.finishReplay(builder, backgroundMin);
    return h;
  }

  /** Waits (bounded) until {@code t} blocks, as a thread waiting for the index does. */
  private static void awaitWaiting(Thread t) throws InterruptedException {
    for (int i = 0; i < 30_000 && t.getState() != Thread.State.WAITING; i++) {
      Thread.sleep(1);
    }
    assertThat(t.getState()).as("%s blocks until the index is built", t.getName()).isEqualTo(Thread.State.WAITING);
  }

  @Test
  void aLargeReplayTakesWritesWhileItsIndexIsBuiltAndQueriesWaitForTheWholeIndex() throws Exception {
    int n = 201;
    HeldExecutor builder = new HeldExecutor();
    TenantHead h = replayedHead(n, builder, 1);
    assertThat(builder.held).as("the build is handed to the background").hasSize(1);

    // Writes do not wait: a sample of a replayed series, a new series, and metadata.
    Appender app = h.appender();
    app.add(app.series(Labels.of("__name__", "m", "i", "s7")), 2000, 7);
    app.add(app.series(Labels.of("__name__", "m", "i", "new")), 2000, -1);
    assertThat(app.commit(false).appended()).isEqualTo(2);
    assertThat(h.metadata().commit(List.of(dev.weir.proto.prompb.MetricMetadata.newBuilder()
        .setMetricFamilyName("m").setHelp("h").build()), false)).isEqualTo(1);
    assertThat(h.numSeries()).isEqualTo(n + 1);

    java.util.concurrent.atomic.AtomicReference<List<SeriesChunks>> found = new java.util.concurrent.atomic.AtomicReference<>();
    Thread query = new Thread(() -> found.set(h.select(0, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "m")))),
        "query");
    query.start();
    awaitWaiting(query);
    assertThat(found.get()).isNull();

    builder.runAll();
    query.join(60_000);
    assertThat(found.get()).as("every replayed series with a sample, and the new one").hasSize(n + 1);
    int[] refs = h.postings().get("__name__", "m");
    assertThat(refs).hasSize(n + 1).isSorted();
    assertThat(refs[n - 1]).isEqualTo(n);
    assertThat(refs[n]).as("the series created during the build comes last").isGreaterThan(n + 1);
    assertThat(h.postings().get("i", "empty")).as("dropped: no sample").isEmpty();
    assertThat(h.postings().get("i", "new")).containsExactly(refs[n]);
    assertThat(h.select(0, Long.MAX_VALUE, List.of(Matcher.eq("i", "s7"))).get(0)
        .samples(0, Long.MAX_VALUE).size()).isEqualTo(2);
    // Later series join the index directly.
    append(Labels.of("__name__", "late"), 3000, 1);
    assertThat(head.select(0, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "late")))).hasSize(1);
    Appender later = h.appender();
    later.add(later.series(Labels.of("__name__", "m", "i", "later")), 3000, 1);
    later.commit(false);
    assertThat(h.postings().get("__name__", "m")).hasSize(n + 2).isSorted();
  }

  @Test
  void truncationWaitsForTheIndexOfAReplayThenRemovesWhatItDropped() throws Exception {
    int n = 50;
    HeldExecutor builder = new HeldExecutor();
    TenantHead h = replayedHead(n, builder, 1);
    Appender app = h.appender();
    app.add(app.series(Labels.of("__name__", "m", "i", "s3")), 5000, 3);
    app.commit(false);
    int[] removed = {-1};
    Thread truncation = new Thread(() -> removed[0] = h.truncate(2000), "truncation");
    truncation.start();
    awaitWaiting(truncation);
    builder.runAll();
    truncation.join(60_000);
    assertThat(removed[0]).as("every series whose only sample was before 2000").isEqualTo(n - 1);
    assertThat(h.postings().get("__name__", "m")).containsExactly(3);
    assertThat(h.select(0, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "m")))).hasSize(1);
  }

  @Test
  void aSmallReplayOrARejectedBuildCompletesTheIndexBeforeReplayEnds() {
    HeldExecutor unused = new HeldExecutor();
    TenantHead small = replayedHead(30, unused, 31);
    assertThat(unused.held).isEmpty();
    assertThat(small.postingsIfBuilt()).isNotNull();
    assertThat(small.indexFailure()).isNull();
    assertThat(small.postings().get("__name__", "m")).hasSize(30).isSorted();

    TenantHead rejected = replayedHead(30, r -> {
      throw new java.util.concurrent.RejectedExecutionException("shut down");
    }, 1);
    assertThat(rejected.postingsIfBuilt()).isNotNull();
    assertThat(rejected.postings().get("__name__", "m")).hasSize(30).isSorted();
  }

  /**
   * Replayed series keep their values in full until the index build gives them numbers; they are
   * found by their labels before, during and after, and a second ref of the same labels (in the
   * form with numbers, as a replay of a non-ASCII series makes) is an alias of the first.
   */
  @Test
  void replayedSeriesGetTheirValueNumbersWhenTheIndexIsBuilt() {
    TenantHead h = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    h.beginReplay();
    Labels[] created = new Labels[11];
    for (int ref = 1; ref <= 10; ref++) {
      created[ref] = Labels.of("__name__", "th_replay_metric", "th_replay_job", "api", "th_replay_i", "s" + ref);
      byte[] inFull = CompactForms.valuesInFull(created[ref]);
      h.replaySeries(ref, inFull, created[ref].hashCode());
      h.replaySample(ref, 1000, ref);
      assertThat(h.byRef(ref).labelBytes()).isSameAs(inFull);
    }
    byte[] numbered = dev.weir.storage.tsdb.labels.CompactLabels.fromCanonical(created[4].encoded().wireEncoding(), null);
    assertThat(numbered).as("the dictionary takes these values").isNotEqualTo(CompactForms.valuesInFull(created[4]));
    h.replaySeries(11, numbered, created[4].hashCode());
    assertThat(h.byRef(11)).as("an alias, not a second series").isSameAs(h.byRef(4));
    HeldExecutor builder = new HeldExecutor();
    h.finishReplay(builder, 1);
    Appender app = h.appender();
    app.add(app.series(created[3]), 2000, 3);
    app.commit(false);
    assertThat(h.numSeries()).as("found by its labels while its values are in full").isEqualTo(10);
    builder.runAll();
    for (int ref = 1; ref <= 10; ref++) {
      assertThat(h.byRef(ref).labelBytes()).as("series %d", ref)
          .isEqualTo(dev.weir.storage.tsdb.labels.CompactLabels.fromCanonical(created[ref].encoded().wireEncoding(), null));
      assertThat(h.byRef(ref).labels()).isEqualTo(created[ref]);
    }
    app.add(app.series(created[5]), 3000, 5);
    app.commit(false);
    assertThat(h.numSeries()).as("and after").isEqualTo(10);
    assertThat(h.postings().get("th_replay_job", "api")).hasSize(10);
    assertThat(h.postings().get("th_replay_i", "s7")).containsExactly(7);
  }

  /** Outside a replay a series record in full is indexed at once, so it gets its value numbers at once. */
  @Test
  void aSeriesRecordOutsideAReplayGetsItsValueNumbersAtOnce() {
    TenantHead h = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    Labels l = Labels.of("__name__", "th_outside_metric", "th_outside_job", "api");
    h.replaySeries(1, CompactForms.valuesInFull(l), l.hashCode());
    assertThat(h.byRef(1).labelBytes())
        .isEqualTo(dev.weir.storage.tsdb.labels.CompactLabels.fromCanonical(l.encoded().wireEncoding(), null));
    assertThat(h.postings().get("th_outside_job", "api")).containsExactly(1);
  }

  @Test
  void aFailedIndexBuildFailsQueriesWithItsCauseInsteadOfAnsweringFromAPartialIndex() {
    TenantHead h = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    h.beginReplay();
    Labels[] created = new Labels[21];
    // Values longer than the value dictionary takes, so each series keeps its own in full.
    String pad = "-" + "x".repeat(LabelValues.MAX_VALUE_BYTES);
    for (int ref = 1; ref <= 20; ref++) {
      created[ref] = Labels.of("__name__", "m", "i", "s" + ref + pad);
      h.replaySeries(ref, created[ref]);
      h.replaySample(ref, 1000, ref);
    }
    // The fault: series 15's label bytes, which the index is built from, say that its last value
    // runs thousands of bytes past their end, so adding it to the index throws. Its length is a
    // two-byte varint of twice the length, just before the value.
    byte[] damaged = h.byRef(15).labelBytes();
    int len = ("s15" + pad).length();
    assertThat(damaged[damaged.length - len - 1]).as("the length's second byte").isEqualTo((byte) ((2 * len) >>> 7));
    damaged[damaged.length - len - 1] = 100;
    HeldExecutor builder = new HeldExecutor();
    h.finishReplay(builder, 1);
    assertThat(h.indexFailure()).as("still building").isNull();
    builder.runAll();
    assertThat(h.postingsIfBuilt()).isNull();
    assertThat(h.indexFailure()).as("readiness reports it").contains("building the index after the WAL replay failed")
        .contains("ArrayIndexOutOfBoundsException");
    assertThatThrownBy(() -> h.select(0, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "m"))))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("building the head's index of tenant t failed")
        .hasCauseInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> h.truncate(2000)).isInstanceOf(IllegalStateException.class);
    Appender app = h.appender();
    app.add(app.series(Labels.of("__name__", "m", "i", "s2")), 2000, 2);
    assertThat(app.commit(false).appended()).as("writes go on").isEqualTo(1);
  }

  @Test
  void aCommitLogsEachNewSeriesOnceHoweverManySamplesItHasAndChecksThemAgainstEachOther(@TempDir Path dir)
      throws Exception {
    TenantHead h = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));
    try (Wal wal = Wal.open(dir, 1L << 30, Wal.DEFAULT_OPENER, WalMetrics.noop(), "t")) {
      h.attachWal(wal);
      Appender app = h.appender();
      for (int k = 0; k < 3; k++) {
        app.add(app.series(Labels.of("__name__", "a")), 1000 + k, k);
        app.add(app.series(Labels.of("__name__", "b")), 1000 + k, -k);
      }
      // Against the newest sample of the same batch (pending, not applied yet):
      app.add(app.series(Labels.of("__name__", "a")), 1002, 2); // the same sample again: a duplicate
      app.add(app.series(Labels.of("__name__", "b")), 1002, 7); // same time, another value
      CommitResult r = app.commit(true);
      assertThat(r.appended()).isEqualTo(6);
      assertThat(r.duplicates()).isEqualTo(1);
      assertThat(r.rejections()).singleElement().extracting(Rejection::reason)
          .isEqualTo(RejectReason.DUPLICATE_TIMESTAMP);
    }
    List<Integer> seriesRecords = new ArrayList<>();
    int[] samples = {0};
    WalReader.replay(dir, new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        seriesRecords.add(ref);
      }

      @Override
      public void sample(int ref, long t, double v) {
        samples[0]++;
      }
    }, false, WalMetrics.noop(), "t");
    assertThat(seriesRecords).as("one series record per new series").hasSize(2).doesNotHaveDuplicates();
    assertThat(samples[0]).isEqualTo(6);
  }
}
