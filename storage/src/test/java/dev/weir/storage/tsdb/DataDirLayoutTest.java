package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.testing.FormerWal;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalCorruptionException;
import dev.weir.storage.util.ByteSink;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The move from the old layout ({@code <data>/wal/<tenant>}) to the per-tenant one, and the
 * conversion of Weir's former WAL format ({@code <data>/tsdb/<tenant>/weir-wal}) to a Prometheus
 * WAL ({@code <data>/tsdb/<tenant>/wal}): data intact, an interrupted step completed or redone by
 * the next start, a migrated directory left alone.
 */
class DataDirLayoutTest {
  static final long RANGE = 60_000;
  @TempDir Path dir;
  private SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private Tsdb open() throws Exception {
    registry = new SimpleMeterRegistry();
    Tsdb t = new Tsdb(TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120)).withWalSegmentBytes(8 * 1024),
        new TsdbMetrics(registry), () -> 1_000, tenant -> () -> 0);
    t.open();
    return t;
  }

  private static Map<Labels, List<Long>> write(Tsdb t, String tenant, int series, long from, long to) {
    return TsdbTest.write(t, tenant, series, from, to);
  }

  private static Map<Labels, List<Long>> read(Tsdb t, String tenant) {
    return TsdbTest.read(t, tenant);
  }

  private double replayedSamples() {
    return registry.get("weir.tsdb.replayed.samples").counter().count();
  }

  /**
   * Rewrites a closed data directory into the old layout, as an older Weir left it: the WAL
   * in the former format under {@code wal/<tenant>}, no {@code tsdb/<tenant>/wal}, and no tenant
   * directory under {@code tsdb/} for a tenant without blocks.
   */
  private void toOldLayout() throws Exception {
    Files.createDirectories(dir.resolve("wal"));
    try (Stream<Path> s = Files.list(dir.resolve("tsdb"))) {
      for (Path tenantDir : s.toList()) {
        FormerWal.downgrade(tenantDir.resolve("wal"), dir.resolve("wal").resolve(tenantDir.getFileName()));
        if (isEmpty(tenantDir)) {
          Files.delete(tenantDir);
        }
      }
    }
  }

  /** Rewrites a closed tenant's WAL in the former format at {@code tsdb/<tenant>/weir-wal}. */
  private void toFormerFormat(String tenant) throws Exception {
    Path tenantDir = dir.resolve("tsdb").resolve(tenant);
    FormerWal.downgrade(tenantDir.resolve("wal"), tenantDir.resolve("weir-wal"));
  }

  /** Asserts a tenant's WAL is converted: a checkpoint 0, no former WAL left. */
  private void assertConverted(String tenant) throws IOException {
    Path tenantDir = dir.resolve("tsdb").resolve(tenant);
    assertThat(Checkpoint.latest(tenantDir.resolve("wal"))).isNotNull().extracting(Checkpoint.Info::index)
        .isEqualTo(0);
    assertThat(tenantDir.resolve("weir-wal")).doesNotExist();
    assertThat(tenantDir.resolve("weir-wal.converting")).doesNotExist();
  }

  private static boolean isEmpty(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.findAny().isEmpty();
    }
  }

  /** Every path under the data dir with its size and modification time. */
  private List<String> tree() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.sorted().map(p -> {
        try {
          return dir.relativize(p) + " " + (Files.isDirectory(p) ? "d" : Files.size(p)) + " "
              + Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).toList();
    }
  }

  @Test
  void movesAnOldLayoutIntoTheTenantDirectoriesAndReplaysEverySample() throws Exception {
    Tsdb t = open();
    Map<Labels, List<Long>> a = write(t, "a", 10, 0, 300_000); // compacted: blocks, checkpoint, segments
    t.compactAll();
    Map<Labels, List<Long>> b = write(t, "b", 3, 10_000, 40_000); // head only
    long headSamplesA = read(t, "a").values().stream().flatMap(List::stream).filter(ts -> ts >= 240_000).count();
    assertThat(t.tenant("a").head().minTime()).isEqualTo(240_000);
    t.close();
    toOldLayout();
    assertThat(Checkpoint.latest(dir.resolve("wal/a"))).isNotNull();
    assertThat(Wal.segments(dir.resolve("wal/b"))).isNotEmpty();
    assertThat(dir.resolve("tsdb/b")).doesNotExist();
    assertThat(dir.resolve("tsdb/a")).isDirectory(); // blocks

    Tsdb again = open();
    try {
      assertThat(again.tenants()).containsExactly("a", "b");
      assertThat(read(again, "a")).isEqualTo(a);
      assertThat(read(again, "b")).isEqualTo(b);
      assertThat(replayedSamples()).as("samples replayed from the moved WALs").isEqualTo(headSamplesA + 3 * 30);
      assertThat(dir.resolve("wal")).doesNotExist();
      for (String tenant : List.of("a", "b")) {
        assertConverted(tenant);
        assertThat(Wal.segments(dir.resolve("tsdb").resolve(tenant).resolve("wal"))).containsExactly(1);
      }
      write(again, "b", 3, 40_000, 41_000); // appends go on in the converted WAL
    } finally {
      again.close();
    }
    Tsdb third = open();
    try {
      assertThat(read(third, "b").values()).allSatisfy(ts -> assertThat(ts).hasSize(31));
    } finally {
      third.close();
    }
  }

  @Test
  void aMigrationInterruptedBetweenTenantsIsCompletedByTheNextStart() throws Exception {
    Tsdb t = open();
    Map<String, Map<Labels, List<Long>>> wrote = new TreeMap<>();
    for (String tenant : List.of("a", "b", "c")) {
      wrote.put(tenant, write(t, tenant, 4, 0, 20_000));
    }
    t.close();
    toOldLayout();

    // Dies like a kill -9 would, right before renaming the second tenant's WAL: tenant a is moved,
    // b's TSDB directory was created but its WAL not renamed yet, c not touched.
    AtomicInteger moves = new AtomicInteger();
    assertThatThrownBy(() -> DataDirLayout.migrate(dir, (from, to) -> {
      if (moves.incrementAndGet() == 2) {
        throw new IOException("killed");
      }
      Files.move(from, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    })).hasMessage("killed");
    assertThat(dir.resolve("tsdb/a/weir-wal")).isDirectory();
    assertThat(dir.resolve("wal/a")).doesNotExist();
    assertThat(dir.resolve("tsdb/b")).isEmptyDirectory();
    assertThat(dir.resolve("wal/b")).isDirectory();
    assertThat(dir.resolve("wal/c")).isDirectory();

    Tsdb again = open();
    try {
      assertThat(again.tenants()).containsExactly("a", "b", "c");
      for (String tenant : wrote.keySet()) {
        assertThat(read(again, tenant)).as("tenant %s", tenant).isEqualTo(wrote.get(tenant));
        assertConverted(tenant);
      }
      assertThat(replayedSamples()).isEqualTo(3 * 4 * 20);
      assertThat(dir.resolve("wal")).doesNotExist();
    } finally {
      again.close();
    }
  }

  @Test
  void aMigrationInterruptedBeforeRemovingTheOldRootIsCompleted() throws Exception {
    Tsdb t = open();
    Map<Labels, List<Long>> wrote = write(t, "a", 4, 0, 20_000);
    t.close();
    // Every WAL moved (still in the former format), but the empty old root still there.
    toFormerFormat("a");
    Files.createDirectories(dir.resolve("wal"));

    Tsdb again = open();
    try {
      assertThat(read(again, "a")).isEqualTo(wrote);
      assertThat(dir.resolve("wal")).doesNotExist();
      assertConverted("a");
    } finally {
      again.close();
    }
  }

  @Test
  void aConversionKilledBeforeItsCheckpointIsRedoneAndOneKilledAfterItOnlyCleansUp() throws Exception {
    Tsdb t = open();
    Map<Labels, List<Long>> a = write(t, "a", 4, 0, 20_000);
    Map<Labels, List<Long>> b = write(t, "b", 4, 0, 20_000);
    t.close();
    toFormerFormat("a");
    toFormerFormat("b");
    // a: marked, and a half-written checkpoint left behind. b: converted, the former WAL half deleted.
    Path tenantA = dir.resolve("tsdb/a");
    Files.move(tenantA.resolve("weir-wal"), tenantA.resolve("weir-wal.converting"));
    Files.createDirectories(tenantA.resolve("wal/checkpoint.00000000.tmp"));
    Files.write(tenantA.resolve("wal/checkpoint.00000000.tmp/00000000"), new byte[] {1, 2, 3});
    Path tenantB = dir.resolve("tsdb/b");
    Files.move(tenantB.resolve("weir-wal"), tenantB.resolve("weir-wal.converting"));
    Checkpoint.write(tenantB.resolve("wal"), 0, into -> write(into, b));
    Files.delete(Wal.segmentPath(tenantB.resolve("weir-wal.converting"), Wal.segments(tenantB.resolve(
        "weir-wal.converting")).get(0))); // the next start must not convert this remainder again

    Tsdb again = open();
    try {
      assertThat(read(again, "a")).isEqualTo(a);
      assertThat(read(again, "b")).isEqualTo(b);
      assertConverted("a");
      assertConverted("b");
      assertThat(tenantA.resolve("wal/checkpoint.00000000.tmp")).doesNotExist();
      assertThat(replayedSamples()).isEqualTo(2 * 4 * 20);
    } finally {
      again.close();
    }
  }

  /** Feeds series and samples to a visitor (refs numbered in the map's order). */
  private static void write(dev.weir.storage.tsdb.wal.WalRecords.Visitor into, Map<Labels, List<Long>> data) {
    int ref = 1;
    for (Map.Entry<Labels, List<Long>> e : new TreeMap<>(data).entrySet()) {
      into.series(ref, e.getKey());
      for (long ts : e.getValue()) {
        into.sample(ref, ts, ts / 1000.0 + Integer.parseInt(e.getKey().get("s")));
      }
      ref++;
    }
  }

  @Test
  void aFormerWalWithATornTailIsConvertedUpToItAndOneCorruptInTheMiddleIsRefused() throws Exception {
    Path tenantA = Files.createDirectories(dir.resolve("tsdb/a"));
    ByteSink series = new ByteSink(64).put(1).putUvarint(1).putUvarint(1).putUvarint(2).putString("__name__")
        .putString("m").putString("s").putString("0");
    ByteSink sample = new ByteSink(32).put(2).putUvarint(1).putUvarint(1).putVarint(5_000).putVarint(0)
        .putVarint(0).putDouble(5);
    ByteSink source = new ByteSink(8).put(3).putVarint(42);
    Path seg = Wal.segmentPath(tenantA.resolve("weir-wal"), 0);
    FormerWal.writeSegment(seg, List.of(source, series, sample, sample));
    long size = Files.size(seg);
    Corrupt.truncate(seg, size - 3); // the second sample cut in half

    Tsdb t = open();
    try {
      assertThat(read(t, "a")).containsExactly(Map.entry(Labels.of("__name__", "m", "s", "0"), List.of(5_000L)));
      assertThat(t.replayReport().maxSourceOffset()).isEqualTo(42);
      assertConverted("a");
    } finally {
      t.close();
    }

    Path tenantB = Files.createDirectories(dir.resolve("tsdb/b"));
    Path segB = Wal.segmentPath(tenantB.resolve("weir-wal"), 0);
    FormerWal.writeSegment(segB, List.of(series, sample, sample));
    Corrupt.flipByte(segB, 12); // inside the series record; intact samples follow
    long sizeB = Files.size(segB);
    Path marked = Wal.segmentPath(tenantB.resolve("weir-wal.converting"), 0);
    assertThatThrownBy(this::open).isInstanceOf(WalCorruptionException.class)
        .hasMessageContaining("corrupt in the middle").hasMessageContaining(marked.toString());
    assertThat(Files.size(marked)).as("the former WAL is left as it was").isEqualTo(sizeB);
    assertThat(Checkpoint.latest(tenantB.resolve("wal"))).as("no half conversion published").isNull();
  }

  @Test
  void aMigratedDataDirectoryIsLeftUntouched() throws Exception {
    Tsdb t = open();
    write(t, "a", 4, 0, 200_000);
    t.compactAll();
    write(t, "b", 4, 0, 20_000);
    t.close();
    List<String> before = tree();
    assertThat(before).anyMatch(l -> l.startsWith("tsdb/a/wal/checkpoint."));

    assertThat(DataDirLayout.migrate(dir)).isEmpty();
    assertThat(tree()).isEqualTo(before);
  }

  @Test
  void aTenantWithAWalAtBothPlacesIsRefusedNamingBoth() throws Exception {
    Tsdb t = open();
    write(t, "a", 4, 0, 20_000);
    t.close();
    // An older Weir started after the migration: it wrote a fresh WAL at the old place.
    Path old = Files.createDirectories(dir.resolve("wal/a"));
    Files.write(old.resolve("00000000"), new byte[] {1});
    List<String> before = tree();

    assertThatThrownBy(this::open).isInstanceOf(IOException.class)
        .hasMessageContaining(old.toString()).hasMessageContaining(dir.resolve("tsdb/a/weir-wal").toString());
    // (the message names where the WAL would go; the tenant's current WAL is beside it)
    assertThat(tree()).as("nothing moved or deleted").isEqualTo(before);

    // An empty directory at the old place holds nothing to keep: removed.
    Files.delete(old.resolve("00000000"));
    Tsdb again = open();
    again.close();
    assertThat(dir.resolve("wal")).doesNotExist();
  }
}
