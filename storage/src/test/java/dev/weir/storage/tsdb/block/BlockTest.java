package dev.weir.storage.tsdb.block;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.HeadOptions;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.ChunkData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockTest {
  @TempDir Path dir;
  static final long RANGE = 7_200_000L;

  /** A head with {@code n} series of 1000 samples in [0, RANGE), plus a unicode-heavy series. */
  static TenantHead head(int n) {
    TenantHead h = new TenantHead("t", HeadConfig.DEFAULT, HeadOptions.inMemory(() -> 0));
    Appender app = h.appender();
    Random r = new Random(1);
    // Time-major, as scrapes arrive: the head refuses samples far older than its newest one.
    for (int i = 0; i < 1000; i++) {
      for (int s = 0; s < n; s++) {
        Labels l = Labels.of("__name__", "metric_" + (s % 5), "instance", "host-" + s, "zone", "z" + (s % 3));
        app.add(app.series(l), i * 7000L, r.nextInt(100) / 4.0);
      }
      app.commit(false);
    }
    app.add(app.series(Labels.of("__name__", "unicode", "v", "\uD83D\uDE00 \uFFFD é")), 6_000_000, 1);
    app.commit(false);
    return h;
  }

  @Test
  void writtenBlockReadsBackExactly() throws IOException {
    TenantHead h = head(50);
    List<SeriesChunks> all = h.select(0, RANGE - 1, List.of());
    BlockMeta meta = BlockWriter.write(dir, Ulid.random(1_700_000_000_000L), 0, RANGE, all, "");
    Path blockDir = dir.resolve(meta.ulid());
    assertThat(blockDir.resolve("index")).exists();
    assertThat(blockDir.resolve("chunks/000001")).exists();
    assertThat(blockDir.resolve("tombstones")).hasBinaryContent(new byte[] {0x01, 0x30, (byte) 0xBA, 0x30, 1, 0, 0, 0, 0});
    assertThat(meta.numSeries()).isEqualTo(51);
    assertThat(meta.numSamples()).isEqualTo(50 * 1000 + 1);

    Block b = Block.open(blockDir);
    assertThat(b.meta()).isEqualTo(new BlockMeta(meta.ulid(), 0, RANGE, meta.numSamples(), 51, meta.numChunks(), 1,
        List.of(meta.ulid()), ""));
    List<SeriesChunks> read = b.select(0, RANGE, List.of());
    assertThat(read).extracting(SeriesChunks::labels).containsExactlyElementsOf(
        all.stream().map(SeriesChunks::labels).toList());
    for (int i = 0; i < all.size(); i++) {
      SeriesChunks.Samples want = all.get(i).samples(0, RANGE);
      SeriesChunks.Samples got = read.get(i).samples(0, RANGE);
      assertThat(got.timestamps()).isEqualTo(want.timestamps());
      assertThat(got.values()).isEqualTo(want.values());
    }
    assertThat(b.select(0, RANGE, List.of(Matcher.eq("zone", "z1"), Matcher.re("__name__", "metric_[12]"))))
        .extracting(s -> s.labels().get("instance"))
        .containsExactlyElementsOf(h.select(0, RANGE, List.of(Matcher.eq("zone", "z1"),
            Matcher.re("__name__", "metric_[12]"))).stream().map(s -> s.labels().get("instance")).toList());
    assertThat(b.labelValues("zone", 0, RANGE, List.of())).containsExactly("z0", "z1", "z2");
    assertThat(b.labelNames(0, RANGE, List.of())).containsExactly("__name__", "instance", "v", "zone");
    assertThat(b.select(RANGE, RANGE * 2, List.of())).isEmpty();
  }

  @Test
  void histogramChunksKeepTheirEncodingThroughABlock() throws IOException {
    List<SeriesChunks> series = List.of(
        new SeriesChunks(Labels.of("__name__", "a_float_hist"), TestBlocks.histogramChunks(true, 0, 15_000, 300)),
        new SeriesChunks(Labels.of("__name__", "b_hist"), TestBlocks.histogramChunks(false, 0, 15_000, 300)),
        new SeriesChunks(Labels.of("__name__", "c_float"), TestBlocks.chunks(new java.util.TreeMap<>(
            java.util.Map.of(1000L, 1.0, 2000L, 2.0)))));
    BlockMeta meta = BlockWriter.write(dir, Ulid.random(1L), 0, RANGE, series, "");
    assertThat(meta.numSamples()).isEqualTo(602);

    List<SeriesChunks> read = Block.open(dir.resolve(meta.ulid())).select(0, RANGE, List.of());
    assertThat(read).hasSize(3);
    for (int s = 0; s < 3; s++) {
      List<ChunkData> want = series.get(s).chunks();
      List<ChunkData> got = read.get(s).chunks();
      assertThat(got).hasSameSizeAs(want);
      for (int c = 0; c < want.size(); c++) {
        assertThat(got.get(c).encoding()).as("encoding of chunk %d of series %d", c, s).isEqualTo(want.get(c).encoding());
        assertThat(got.get(c).bytes()).isEqualTo(want.get(c).bytes());
        assertThat(got.get(c).minTime()).isEqualTo(want.get(c).minTime());
      }
    }
    assertThat(read.get(0).chunks()).extracting(ChunkData::encoding).containsOnly(Chunks.FLOAT_HISTOGRAM);
    assertThat(read.get(1).chunks()).extracting(ChunkData::encoding).containsOnly(Chunks.HISTOGRAM);
    assertThat(read.get(1).chunks()).hasSizeGreaterThan(1);
  }

  @Test
  void aChunkOfAnUnknownEncodingIsAnErrorNamingIt() throws IOException {
    List<SeriesChunks> series = List.of(
        new SeriesChunks(Labels.of("__name__", "h"), TestBlocks.histogramChunks(false, 0, 15_000, 10)));
    BlockMeta meta = BlockWriter.write(dir, Ulid.random(1L), 0, RANGE, series, "");
    Path segment = dir.resolve(meta.ulid()).resolve("chunks/000001");
    byte[] bytes = Files.readAllBytes(segment);
    int chunkLen = series.get(0).chunks().get(0).bytes().length;
    int encodingAt = 8 + (chunkLen < 128 ? 1 : 2); // after the segment header and the length uvarint
    assertThat(bytes[encodingAt]).isEqualTo(Chunks.HISTOGRAM);
    bytes[encodingAt] = 9;
    Files.write(segment, bytes);
    Block b = Block.open(dir.resolve(meta.ulid()));
    assertThatThrownBy(() -> b.select(0, RANGE, List.of())).hasMessageContaining("unsupported chunk encoding 9");
  }

  @Test
  void corruptIndexFailsToOpen() throws IOException {
    TenantHead h = head(3);
    BlockMeta meta = BlockWriter.write(dir, Ulid.random(1L), 0, RANGE, h.select(0, RANGE - 1, List.of()), "");
    Path index = dir.resolve(meta.ulid()).resolve("index");
    Corrupt.flipByte(index, 12); // inside the symbol table
    assertThatThrownBy(() -> Block.open(dir.resolve(meta.ulid()))).isInstanceOf(IOException.class)
        .hasMessageContaining("checksum");
  }

  @Test
  void refusesChunksOutsideTheRangeAndLeavesNoBlockBehind() {
    TenantHead h = head(2);
    assertThatThrownBy(() -> BlockWriter.write(dir, Ulid.random(1L), 0, 1000, h.select(0, RANGE, List.of()), ""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the block range");
    assertThat(dir.toFile().list()).allMatch(n -> n.endsWith(".tmp"));
  }

  @Test
  void ulidsAreWellFormedAndSortByTime() {
    String a = Ulid.random(1_000L);
    String b = Ulid.random(2_000L);
    assertThat(a).hasSize(26);
    assertThat(Ulid.isUlid(a)).isTrue();
    assertThat(a.compareTo(b)).isNegative();
    assertThat(Ulid.of(0, new byte[10])).isEqualTo("00000000000000000000000000");
    assertThat(Ulid.isUlid("not-a-ulid")).isFalse();
    assertThat(Files.exists(dir)).isTrue();
  }
}
