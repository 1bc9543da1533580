package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Early head compaction on disk: what it writes, what it frees, what it refuses (nothing new),
 * and that restarts (clean, and after a crash between its block and its WAL checkpoint) find
 * every acknowledged sample exactly once.
 */
class EarlyCompactionTest {
  /** Block and chunk range 60 s: the head accepts in order down to its newest sample − 30 s. */
  private static final long RANGE = 60_000;
  private static final EarlyCompaction.Config MANUAL =
      new EarlyCompaction.Config(60, 0, 15, Duration.ofHours(1)); // checked only when a test asks
  @TempDir Path dir;
  private final List<Tsdb> open = new ArrayList<>();
  private SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private Tsdb openTsdb(EarlyCompaction.Config early, int samplesPerChunk) throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, samplesPerChunk, 8))
        .withRetention(Duration.ZERO).withWalSegmentBytes(64 * 1024);
    registry = new SimpleMeterRegistry();
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(registry), () -> 1_000, tenant -> () -> 0);
    t.earlyCompaction(early);
    t.open();
    open.add(t);
    return t;
  }

  @AfterEach
  void closeAll() {
    open.forEach(Tsdb::close);
  }

  private void close(Tsdb t) {
    t.close();
    open.remove(t);
  }

  private static Labels series(int gen, int s) {
    return Labels.of("__name__", "churn", "gen", String.valueOf(gen), "pod", "p" + s);
  }

  /**
   * Generation {@code gen} of {@code n} series (pods replaced by a rollout): samples at
   * gen × 20 s + 0, 5, 10, 15 s.
   */
  private static void generation(Tsdb t, int gen, int n, Map<Labels, TreeMap<Long, Double>> acked) {
    Appender app = t.head("a").appender();
    for (long ts = gen * 20_000L; ts < gen * 20_000L + 20_000; ts += 5_000) {
      for (int s = 0; s < n; s++) {
        app.add(app.series(series(gen, s)), ts, ts + s);
        acked.computeIfAbsent(series(gen, s), k -> new TreeMap<>()).put(ts, (double) ts + s);
      }
      CommitResult r = app.commit(true);
      assertThat(r.rejections()).isEmpty();
    }
  }

  /** Every series' samples over blocks and head, one per timestamp. */
  private static Map<Labels, TreeMap<Long, Double>> read(Tsdb t) {
    Map<Labels, TreeMap<Long, Double>> got = new TreeMap<>();
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
      TreeMap<Long, Double> m = new TreeMap<>();
      for (int i = 0; i < samples.size(); i++) {
        m.put(samples.timestamps()[i], samples.values()[i]);
      }
      got.put(s.labels(), m);
    }
    return got;
  }

  /** Samples stored over blocks and head, a sample held twice counted twice. */
  private static long stored(Tsdb t) {
    long n = 0;
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      for (ChunkData c : s.chunks()) {
        n += Chunks.numSamples(c.encoding(), c.bytes());
      }
    }
    return n;
  }

  private static long count(Map<Labels, TreeMap<Long, Double>> m) {
    return m.values().stream().mapToLong(TreeMap::size).sum();
  }

  private static List<Block> earlyBlocks(Tsdb t) {
    return t.tenant("a").blocks().stream().filter(TenantDb::isEarlyBlock).toList();
  }

  private double counter(String name) {
    return registry.get(name).counter().count();
  }

  @Test
  void churnedSeriesLeaveTheHeadAndEverySampleIsFoundOnceAcrossRestartsAndTheNextCompaction() throws Exception {
    Tsdb t = openTsdb(MANUAL, 120);
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    for (int gen = 0; gen < 4; gen++) {
      generation(t, gen, 50, acked); // newest sample 75 s: in order from 45 s, no complete range yet
    }
    t.compactAll();
    assertThat(t.tenant("a").blocks()).as("no range complete: a normal compaction writes nothing").isEmpty();
    assertThat(t.head("a").numSeries()).isEqualTo(200);

    assertThat(t.compactEarlyIfOverThreshold()).isEqualTo(1);

    // Generations 0 and 1 (last sample 15 s, 35 s) are older than 45 s: in the block, out of memory.
    // Generation 2 (40–55 s) has a chunk across 45 s: it stays whole in the head.
    assertThat(t.head("a").numSeries()).isEqualTo(100);
    List<Block> early = earlyBlocks(t);
    assertThat(early).hasSize(1);
    assertThat(early.get(0).meta().numSeries()).isEqualTo(100);
    assertThat(early.get(0).meta().numSamples()).isEqualTo(400);
    assertThat(early.get(0).meta().maxTime()).isEqualTo(45_000);
    assertThat(counter("weir.tsdb.early.head.compactions")).isEqualTo(1);
    assertThat(counter("weir.tsdb.early.head.compaction.removed.series")).isEqualTo(100);
    assertThat(read(t)).isEqualTo(acked);
    assertThat(stored(t)).as("no sample in both the block and the head").isEqualTo(count(acked));

    // The head refuses nothing it accepted before: 45 s was and is the oldest accepted time.
    Appender app = t.head("a").appender();
    app.add(app.series(series(9, 0)), 44_999, 1);
    assertThat(app.commit(true).rejections()).as("older than newest − 30 s, before and after").hasSize(1);
    app.add(app.series(series(9, 0)), 45_000, 1);
    app.add(app.series(series(0, 0)), 46_000, 2); // a removed series comes back
    assertThat(app.commit(true).rejections()).isEmpty();
    acked.put(series(9, 0), new TreeMap<>(Map.of(45_000L, 1.0)));
    acked.get(series(0, 0)).put(46_000L, 2.0);
    assertThat(read(t)).isEqualTo(acked);
    close(t);

    Tsdb again = openTsdb(MANUAL, 120);
    assertThat(read(again)).as("after a restart: early block + checkpointed WAL").isEqualTo(acked);
    assertThat(stored(again)).as("the checkpoint dropped what the block holds").isEqualTo(count(acked));
    assertThat(again.head("a").numSeries()).isEqualTo(102);
    assertThat(again.head("a").minValidTime()).as("an early block does not bound the head").isEqualTo(Long.MIN_VALUE);

    // Time moves on: the normal compaction of [0, 60 s) writes only what the early one left.
    for (int gen = 4; gen < 6; gen++) {
      generation(again, gen, 50, acked);
    }
    again.compactAll();
    assertThat(again.tenant("a").blocks()).hasSize(2);
    assertThat(read(again)).isEqualTo(acked);
    assertThat(stored(again)).isEqualTo(count(acked));
    close(again);
    Tsdb third = openTsdb(MANUAL, 120);
    assertThat(read(third)).isEqualTo(acked);
    assertThat(stored(third)).isEqualTo(count(acked));
  }

  @Test
  void aLiveSeriesKeepsItsYoungChunksAndTheCheckpointKeepsExactlyThose() throws Exception {
    // One series, a sample every second for 75 s, 10 samples per chunk.
    Tsdb t = openTsdb(new EarlyCompaction.Config(0, 1, 5, Duration.ofHours(1)), 10);
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    Labels l = series(0, 0);
    Appender app = t.head("a").appender();
    for (long ts = 0; ts < 75_000; ts += 1_000) {
      app.add(app.series(l), ts, ts);
      assertThat(app.commit(true).rejections()).isEmpty();
      acked.computeIfAbsent(l, k -> new TreeMap<>()).put(ts, (double) ts);
    }
    assertThat(t.compactEarlyIfOverThreshold()).as("the memory budget of 1 byte is exceeded").isEqualTo(1);
    assertThat(t.head("a").numSeries()).isEqualTo(1);
    assertThat(earlyBlocks(t).get(0).meta().numSamples()).as("chunks [0,10 s) .. [30,40 s)").isEqualTo(40);
    assertThat(read(t)).isEqualTo(acked);
    assertThat(stored(t)).isEqualTo(count(acked));
    close(t);

    Tsdb again = openTsdb(MANUAL, 10);
    assertThat(read(again)).isEqualTo(acked);
    assertThat(stored(again)).as("samples of the written chunks not replayed into the head").isEqualTo(count(acked));
    assertThat(again.head("a").minTime()).isEqualTo(40_000);
  }

  /**
   * A series that falls silent and comes back within the same chunk range appends to its open
   * head chunk, which then reaches back past the head's minimum valid time: the head keeps
   * samples older than that minimum, and the next checkpoint must keep them too (found by
   * {@code EarlyCompactionStressTest}: they were present until a restart).
   */
  @Test
  void samplesTheHeadKeepsBelowItsMinimumValidTimeSurviveTheCheckpointAndARestart() throws Exception {
    Tsdb t = openTsdb(new EarlyCompaction.Config(1, 0, 0, Duration.ofHours(1)), 4); // 4 samples per chunk
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    Labels quiet = series(0, 0);
    Labels busy = series(0, 1);
    // The first check cuts at 850 s (the busy series' chunk [844, 847 s] goes), the second at 869 s.
    for (long ts = 844_000; ts < 900_000; ts += 1_000) {
      Appender app = t.head("a").appender();
      app.add(app.series(busy), ts, ts);
      acked.computeIfAbsent(busy, k -> new TreeMap<>()).put(ts, (double) ts);
      if ((ts >= 848_000 && ts <= 850_000) || ts == 882_000) { // silent for 31 s, then back in its open head chunk
        app.add(app.series(quiet), ts, -ts);
        acked.computeIfAbsent(quiet, k -> new TreeMap<>()).put(ts, (double) -ts);
      }
      assertThat(app.commit(true).rejections()).isEmpty();
      if (ts == 880_000 || ts == 899_000) {
        assertThat(t.compactEarlyIfOverThreshold()).isEqualTo(1);
      }
    }
    dev.weir.storage.tsdb.head.TenantHead head = t.head("a");
    assertThat(head.minValidTime()).as("cut at the newest sample minus half a range").isEqualTo(869_000);
    assertThat(head.heldFrom(head.get(quiet).ref())).as("the head holds the quiet series from its first sample")
        .isEqualTo(848_000);
    assertThat(read(t)).isEqualTo(acked);
    close(t);

    Tsdb again = openTsdb(MANUAL, 4);
    assertThat(read(again)).as("after the restart").isEqualTo(acked);
    assertThat(stored(again)).as("each sample once").isEqualTo(count(acked));
  }

  @Test
  void aCrashBetweenTheBlockAndTheCheckpointLosesNothing() throws Exception {
    Tsdb t = openTsdb(MANUAL, 120);
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    for (int gen = 0; gen < 4; gen++) {
      generation(t, gen, 50, acked);
    }
    t.tenant("a").wal().sync();
    Path wal = dir.resolve("tsdb/a/wal");
    Path saved = dir.resolve("wal-before");
    copyTree(wal, saved);
    assertThat(t.compactEarlyIfOverThreshold()).isEqualTo(1);
    close(t);
    // The state of a kill -9 after the block was renamed into place, before the checkpoint.
    dev.weir.storage.tsdb.wal.Checkpoint.deleteRecursively(wal);
    copyTree(saved, wal);

    Tsdb again = openTsdb(MANUAL, 120);
    assertThat(earlyBlocks(again)).hasSize(1);
    assertThat(read(again)).as("head replayed whole beside the block: each sample once in queries")
        .isEqualTo(acked);
    assertThat(again.head("a").numSeries()).isEqualTo(200);
    // Compacting early again writes the replayed chunks once more; queries still see each sample once.
    assertThat(again.compactEarlyIfOverThreshold()).isEqualTo(1);
    for (int gen = 4; gen < 6; gen++) {
      generation(again, gen, 50, acked);
    }
    again.compactAll();
    assertThat(read(again)).isEqualTo(acked);
    close(again);
    assertThat(read(openTsdb(MANUAL, 120))).isEqualTo(acked);
  }

  @Test
  void belowTheThresholdNothingHappensAndWithNothingOldEnoughTheCheckIsSkipped() throws Exception {
    Tsdb t = openTsdb(new EarlyCompaction.Config(300, 0, 15, Duration.ofHours(1)), 120);
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    generation(t, 0, 200, acked);
    assertThat(t.compactEarlyIfOverThreshold()).as("200 series < 300").isZero();
    assertThat(counter("weir.tsdb.early.head.compactions.skipped")).isZero();
    // 400 series, all younger than newest − 30 s: nothing can leave without refusing samples.
    generation(t, 1, 200, acked);
    assertThat(t.compactEarlyIfOverThreshold()).isZero();
    assertThat(counter("weir.tsdb.early.head.compactions.skipped")).isEqualTo(1);
    assertThat(t.tenant("a").blocks()).isEmpty();
    assertThat(t.head("a").numSeries()).isEqualTo(400);
    assertThat(read(t)).isEqualTo(acked);
  }

  @Test
  void thePeriodicCheckCompactsByItself() throws Exception {
    Tsdb t = openTsdb(new EarlyCompaction.Config(60, 0, 15, Duration.ofMillis(20)), 120);
    Map<Labels, TreeMap<Long, Double>> acked = new TreeMap<>();
    for (int gen = 0; gen < 4; gen++) {
      generation(t, gen, 50, acked);
    }
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (t.head("a").numSeries() > 100 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(t.head("a").numSeries()).isEqualTo(100);
    assertThat(read(t)).isEqualTo(acked);
  }

  private static void copyTree(Path from, Path to) throws Exception {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.toList()) {
        Path dest = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(dest);
        } else {
          Files.copy(p, dest, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }
}
