package dev.weir.ingester.tool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.storage.testing.FormerWal;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalPages;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code wal inspect} on WALs written by the real Tsdb, intact and damaged. */
class WalInspectCommandTest {
  @TempDir Path dir;
  Path data;

  @BeforeEach
  void writeWals() throws Exception {
    data = dir.resolve("data");
    // Small segments, so tenant a's WAL spans several.
    Tsdb t = new Tsdb(TsdbConfig.defaults(data).withWalSegmentBytes(4 * 1024), TsdbMetrics.noop(), () -> 0,
        x -> () -> 0);
    t.open();
    write(t, "a", 20, 30, 100);
    write(t, "b", 3, 5, 500);
    t.close();
  }

  /** {@code series} series at 1 s, 2 s, ... {@code points} s; commit i carries source offset firstSource + i. */
  private static void write(Tsdb t, String tenant, int series, int points, long firstSource) {
    Appender app = t.head(tenant).appender();
    for (int i = 0; i < points; i++) {
      app.source(firstSource + i);
      for (int s = 0; s < series; s++) {
        app.add(app.series(Labels.of("__name__", "m", "s", String.valueOf(s))), (i + 1) * 1000L, s + i);
      }
      assertThat(app.commit(true).rejections()).isEmpty();
    }
  }

  @Test
  void reportsWhatTheTsdbAppendedForEveryTenantOfADataDir() throws Exception {
    ToolRun r = ToolRun.of("wal", "inspect", data.toString());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.err()).isEmpty();
    List<JsonNode> lines = r.lines();
    assertThat(lines).extracting(n -> n.get("tenant").asText()).containsExactly("a", "b");
    JsonNode a = lines.get(0);
    assertThat(a.get("series").asLong()).isEqualTo(20);
    assertThat(a.get("samples").asLong()).isEqualTo(20 * 30);
    assertThat(a.get("min_time").asLong()).isEqualTo(1000);
    assertThat(a.get("max_time").asLong()).isEqualTo(30_000);
    assertThat(a.get("max_source_offset").asLong()).isEqualTo(129);
    assertThat(a.get("checkpoint").isNull()).isTrue();
    assertThat(a.get("damage").isNull()).isTrue();
    Path walA = data.resolve("tsdb/a/wal");
    assertThat(a.get("records").asLong()).isEqualTo(recordStarts(walA).values().stream().mapToLong(List::size).sum());
    assertThat(a.get("segments")).hasSizeGreaterThan(1);
    for (JsonNode s : a.get("segments")) {
      assertThat(s.get("bytes").asLong()).isEqualTo(Files.size(Wal.segmentPath(walA, s.get("index").asInt())));
    }
    JsonNode b = lines.get(1);
    assertThat(List.of(b.get("series").asLong(), b.get("samples").asLong(), b.get("min_time").asLong(),
        b.get("max_time").asLong(), b.get("max_source_offset").asLong())).containsExactly(3L, 15L, 1000L, 5000L, 504L);
  }

  @Test
  void acceptsOneTenantsWalDirectory() {
    ToolRun r = ToolRun.of("wal", "inspect", data.resolve("tsdb/b/wal").toString());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines()).singleElement().satisfies(n -> {
      assertThat(n.get("tenant").asText()).isEqualTo("b");
      assertThat(n.get("samples").asLong()).isEqualTo(15);
    });
  }

  @Test
  void acceptsOneTenantsTsdbDirectory() {
    ToolRun r = ToolRun.of("wal", "inspect", data.resolve("tsdb/b").toString());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines()).singleElement().satisfies(n -> {
      assertThat(n.get("tenant").asText()).isEqualTo("b");
      assertThat(n.get("dir").asText()).isEqualTo(data.resolve("tsdb/b/wal").toString());
      assertThat(n.get("samples").asLong()).isEqualTo(15);
    });
  }

  @Test
  void namesAWalInTheFormerFormatWithoutReadingOrConvertingIt() throws Exception {
    FormerWal.downgrade(data.resolve("tsdb/b/wal"), data.resolve("tsdb/b/weir-wal"));
    String before = hashTree(data);

    ToolRun r = ToolRun.of("wal", "inspect", data.toString());

    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines()).extracting(n -> n.get("tenant").asText() + " " + n.get("samples").asLong())
        .containsExactly("a 600");
    assertThat(r.err()).contains(data.resolve("tsdb/b/weir-wal") + " is a WAL in Weir's former format");
    assertThat(hashTree(data)).isEqualTo(before);
  }

  @Test
  void aFlippedByteIsReportedWithSegmentAndOffsetAndNothingIsRepaired() throws Exception {
    Path walA = data.resolve("tsdb/a/wal");
    Map<Integer, List<Integer>> starts = recordStarts(walA);
    int segment = starts.keySet().iterator().next();
    Path file = Wal.segmentPath(walA, segment);
    int damaged = starts.get(segment).get(1);
    byte[] bytes = Files.readAllBytes(file);
    bytes[damaged + 7 + 2] ^= 0x10; // inside the first fragment's data: the CRC no longer matches
    Files.write(file, bytes);
    String before = hashTree(data);

    ToolRun r = ToolRun.of("wal", "inspect", data.toString());

    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(hashTree(data)).isEqualTo(before);
    JsonNode damage = r.lines().get(0).get("damage");
    assertThat(damage.get("segment").asText()).isEqualTo(file.toString());
    assertThat(damage.get("offset").asInt()).isEqualTo(damaged);
    assertThat(damage.get("what").asText()).isEqualTo("checksum mismatch in fragment at offset " + damaged);
    assertThat(damage.get("kind").asText()).isEqualTo("corruption");
    assertThat(damage.get("valid_records_after").asLong()).isPositive();
    assertThat(r.lines().get(0).get("records").asLong()).isEqualTo(1); // the one record before it
    assertThat(r.lines().get(1).get("damage").isNull()).isTrue();
    assertThat(r.err().strip().lines()).singleElement().asString()
        .contains("tenant a", file.toString(), "offset " + damaged, "checksum mismatch");
  }

  @Test
  void aTornTailIsReportedAndLeftInPlace() throws Exception {
    Path walB = data.resolve("tsdb/b/wal");
    Map<Integer, List<Integer>> starts = recordStarts(walB);
    int last = new ArrayList<>(starts.keySet()).get(starts.size() - 1);
    Path file = Wal.segmentPath(walB, last);
    byte[] bytes = Files.readAllBytes(file);
    Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 3));
    String before = hashTree(data);

    ToolRun r = ToolRun.of("wal", "inspect", walB.toString());

    assertThat(r.code()).isEqualTo(1);
    assertThat(hashTree(data)).isEqualTo(before);
    JsonNode damage = r.lines().get(0).get("damage");
    List<Integer> recs = starts.get(last);
    assertThat(damage.get("offset").asInt()).isEqualTo(recs.get(recs.size() - 1));
    assertThat(damage.get("kind").asText()).isEqualTo("torn-tail");
    assertThat(r.err()).contains("torn tail");
  }

  @Test
  void aDirectoryWithoutWalsIsAFailure() throws Exception {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    ToolRun r = ToolRun.of("wal", "inspect", empty.toString());
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("is neither a tenant WAL directory");
    assertThat(ToolRun.of("wal", "inspect", dir.resolve("missing").toString()).err()).contains("is not a directory");
  }

  /** Record start offsets per non-empty segment, by reading the pages (Prometheus' framing). */
  static Map<Integer, List<Integer>> recordStarts(Path wal) throws Exception {
    Map<Integer, List<Integer>> out = new TreeMap<>();
    for (int s : Wal.segments(wal)) {
      byte[] bytes = Files.readAllBytes(Wal.segmentPath(wal, s));
      WalPages.Reader r = new WalPages.Reader(ByteBuffer.wrap(bytes), 0, bytes.length);
      List<Integer> starts = new ArrayList<>();
      while (r.next() != null) {
        starts.add(r.recordStart());
      }
      assertThat(r.damageAt()).isEqualTo(-1);
      if (!starts.isEmpty()) {
        out.put(s, starts);
      }
    }
    return out;
  }

  /** SHA-256 of every file under {@code root}, with its path and size: any change shows. */
  static String hashTree(Path root) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    List<Path> files;
    try (Stream<Path> s = Files.walk(root)) {
      files = s.sorted().toList();
    }
    for (Path f : files) {
      sha.update(root.relativize(f).toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      if (Files.isRegularFile(f)) {
        sha.update(Files.readAllBytes(f));
      }
    }
    return HexFormat.of().formatHex(sha.digest());
  }
}
