package dev.weir.ingester.tool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code blocks ls} and {@code blocks verify} on blocks written by the real BlockWriter into a filesystem bucket. */
class BlocksCommandTest {
  static final long RANGE = 7_200_000;
  @TempDir Path dir;
  Path bucketDir;
  final List<BlockMeta> written = new ArrayList<>();
  final List<String> tenants = new ArrayList<>();

  @BeforeEach
  void writeBlocks() throws Exception {
    bucketDir = dir.resolve("bucket");
    FilesystemBucket bucket = new FilesystemBucket(bucketDir);
    upload(bucket, "team-a", 0, 4, 300);
    upload(bucket, "team-a", RANGE, 2, 50);
    upload(bucket, "team-b", 0, 7, 121);
  }

  /** A block of {@code series} series with {@code samples} samples each (cut at 120 per chunk). */
  private void upload(FilesystemBucket bucket, String tenant, long mint, int series, int samples) throws Exception {
    List<SeriesChunks> all = new ArrayList<>();
    for (int s = 0; s < series; s++) {
      List<ChunkData> chunks = new ArrayList<>();
      XorAppender app = new XorAppender();
      for (int i = 0; i < samples; i++) {
        if (app.numSamples() == 120) {
          chunks.add(new ChunkData(app.minTime(), app.maxTime(), app.bytes()));
          app = new XorAppender();
        }
        app.append(mint + i * 15_000L, s * 1000 + i);
      }
      chunks.add(new ChunkData(app.minTime(), app.maxTime(), app.bytes()));
      all.add(new SeriesChunks(Labels.of("__name__", "up", "instance", "host-" + s), chunks));
    }
    all.sort((x, y) -> x.labels().compareTo(y.labels()));
    Path staging = dir.resolve("staging");
    BlockMeta meta = BlockWriter.write(staging, Ulid.random(1_700_000_000_000L + mint), mint, mint + RANGE, all, "");
    bucket.upload(tenant, meta.ulid(), staging.resolve(meta.ulid()));
    written.add(meta);
    tenants.add(tenant);
  }

  private String bucketFlag() {
    return "--blocks-storage.filesystem.dir=" + bucketDir;
  }

  @Test
  void lsListsEveryBlockWithItsMeta() {
    ToolRun r = ToolRun.of("blocks", "ls", bucketFlag());
    assertThat(r.code()).as(r.toString()).isZero();
    List<String> want = new ArrayList<>();
    for (int i = 0; i < written.size(); i++) {
      BlockMeta m = written.get(i);
      want.add(tenants.get(i) + " " + m.ulid() + " " + m.minTime() + " " + m.maxTime() + " " + m.numSeries() + " "
          + m.numSamples() + " " + m.numChunks());
    }
    assertThat(r.lines()).extracting(n -> n.get("tenant").asText() + " " + n.get("id").asText() + " "
        + n.get("min_time").asLong() + " " + n.get("max_time").asLong() + " " + n.get("series").asLong() + " "
        + n.get("samples").asLong() + " " + n.get("chunks").asLong())
        .containsExactlyInAnyOrderElementsOf(want);
    assertThat(written).extracting(BlockMeta::numSamples).containsExactly(4 * 300L, 2 * 50L, 7 * 121L);
    assertThat(ToolRun.of("blocks", "ls", bucketFlag(), "--tenant=team-b").lines()).singleElement()
        .satisfies(n -> assertThat(n.get("id").asText()).isEqualTo(written.get(2).ulid()));
  }

  @Test
  void verifyReadsEveryChunkOfIntactBlocks() {
    ToolRun r = ToolRun.of("blocks", "verify", bucketFlag());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.lines()).hasSize(3).allSatisfy(n -> assertThat(n.get("ok").asBoolean()).isTrue());
    JsonNode b = r.lines().stream().filter(n -> n.get("tenant").asText().equals("team-b")).findFirst().orElseThrow();
    assertThat(b.get("samples").asLong()).isEqualTo(7 * 121);
    assertThat(b.get("chunks").asLong()).isEqualTo(7 * 2);
  }

  @Test
  void verifyReportsATruncatedChunkFileAndLeavesTheBucketAlone() throws Exception {
    BlockMeta victim = written.get(0);
    Path chunks = bucketDir.resolve("team-a").resolve(victim.ulid()).resolve("chunks/000001");
    try (RandomAccessFile f = new RandomAccessFile(chunks.toFile(), "rw")) {
      f.setLength(f.length() - 20);
    }
    String before = WalInspectCommandTest.hashTree(bucketDir);

    ToolRun r = ToolRun.of("blocks", "verify", bucketFlag());

    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(WalInspectCommandTest.hashTree(bucketDir)).isEqualTo(before);
    assertThat(r.lines()).hasSize(3).allSatisfy(n ->
        assertThat(n.get("ok").asBoolean()).isEqualTo(!n.get("id").asText().equals(victim.ulid())));
    JsonNode bad = r.lines().stream().filter(n -> !n.get("ok").asBoolean()).findFirst().orElseThrow();
    assertThat(bad.get("problems").get(0).asText()).startsWith("cannot read the chunks");
    assertThat(r.err().strip().lines()).singleElement().asString()
        .contains("block team-a/" + victim.ulid() + " is damaged");
  }

  @Test
  void aMissingBucketIsAFailureAndIsNotCreated() {
    Path missing = dir.resolve("nope");
    ToolRun r = ToolRun.of("blocks", "verify", "--blocks-storage.filesystem.dir=" + missing);
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("bucket directory " + missing + " does not exist");
    assertThat(missing).doesNotExist();
  }

  @Test
  void aFlippedChunkByteFailsItsChecksum() throws Exception {
    BlockMeta victim = written.get(2);
    Path chunks = bucketDir.resolve("team-b").resolve(victim.ulid()).resolve("chunks/000001");
    byte[] b = Files.readAllBytes(chunks);
    b[b.length / 2] ^= 0x01;
    Files.write(chunks, b);
    ToolRun r = ToolRun.of("blocks", "verify", bucketFlag(), "--tenant=team-b");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.lines().get(0).get("problems").get(0).asText()).contains("checksum mismatch");
  }
}
