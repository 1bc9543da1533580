package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
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
 * The move from the old layout ({@code <data>/wal/<tenant>}) to the per-tenant one
 * ({@code <data>/tsdb/<tenant>/weir-wal}): data intact, an interrupted move completed by the next
 * start, a migrated directory left alone.
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
   * (same format) under {@code wal/<tenant>}, no {@code tsdb/<tenant>/wal}, and no tenant
   * directory under {@code tsdb/} for a tenant without blocks.
   */
  private void toOldLayout() throws IOException {
    Files.createDirectories(dir.resolve("wal"));
    try (Stream<Path> s = Files.list(dir.resolve("tsdb"))) {
      for (Path tenantDir : s.toList()) {
        Files.move(tenantDir.resolve("weir-wal"), dir.resolve("wal").resolve(tenantDir.getFileName()));
        Files.delete(tenantDir.resolve("wal"));
        if (isEmpty(tenantDir)) {
          Files.delete(tenantDir);
        }
      }
    }
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
      assertThat(Checkpoint.latest(dir.resolve("tsdb/a/weir-wal"))).isNotNull();
      for (String tenant : List.of("a", "b")) {
        assertThat(Wal.segments(dir.resolve("tsdb").resolve(tenant).resolve("weir-wal"))).isNotEmpty();
        assertThat(dir.resolve("tsdb").resolve(tenant).resolve("wal")).isEmptyDirectory();
      }
      write(again, "b", 3, 40_000, 41_000); // appends go on in the moved WAL
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
        assertThat(dir.resolve("tsdb").resolve(tenant).resolve("wal")).isEmptyDirectory();
      }
      assertThat(replayedSamples()).isEqualTo(3 * 4 * 20);
      assertThat(dir.resolve("wal")).doesNotExist();
    } finally {
      again.close();
    }
  }

  @Test
  void aMigrationInterruptedBeforeRemovingTheOldRootOrCreatingThePrometheusWalIsCompleted() throws Exception {
    Tsdb t = open();
    Map<Labels, List<Long>> wrote = write(t, "a", 4, 0, 20_000);
    t.close();
    // Every WAL moved, but the empty old root still there; the tenant's wal/ not created yet.
    Files.createDirectories(dir.resolve("wal"));
    Files.delete(dir.resolve("tsdb/a/wal"));

    Tsdb again = open();
    try {
      assertThat(read(again, "a")).isEqualTo(wrote);
      assertThat(dir.resolve("wal")).doesNotExist();
      assertThat(dir.resolve("tsdb/a/wal")).isEmptyDirectory();
    } finally {
      again.close();
    }
  }

  @Test
  void aMigratedDataDirectoryIsLeftUntouched() throws Exception {
    Tsdb t = open();
    write(t, "a", 4, 0, 200_000);
    t.compactAll();
    write(t, "b", 4, 0, 20_000);
    t.close();
    List<String> before = tree();
    assertThat(before).anyMatch(l -> l.startsWith("tsdb/a/weir-wal/checkpoint."));

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
    assertThat(tree()).as("nothing moved or deleted").isEqualTo(before);

    // An empty directory at the old place holds nothing to keep: removed.
    Files.delete(old.resolve("00000000"));
    Tsdb again = open();
    again.close();
    assertThat(dir.resolve("wal")).doesNotExist();
  }
}
