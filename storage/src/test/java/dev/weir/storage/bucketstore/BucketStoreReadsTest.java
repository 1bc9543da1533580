package dev.weir.storage.bucketstore;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a query reads from the bucket: the ranges it needs, never whole files. */
class BucketStoreReadsTest {
  @TempDir Path dir;

  @Test
  void aOneSeriesQueryReadsAFractionOfTheBlock() throws IOException {
    FilesystemBucket fs = new FilesystemBucket(dir.resolve("bucket"));
    TestBlocks.Builder b = new TestBlocks.Builder();
    for (int s = 0; s < 2000; s++) {
      int v = s;
      b.addRange(Labels.of("__name__", "metric_" + (s % 5), "instance", "host-" + s, "zone", "z" + (s % 3)), 0,
          2 * HOUR, 30_000, ts -> v + (ts % 7_000));
    }
    String id = b.upload(fs, dir.resolve("scratch"), "t", 0, 2 * HOUR, 1);
    long blockBytes;
    try (Stream<Path> files = Files.walk(dir.resolve("bucket/t/" + id))) {
      blockBytes = files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
    CountingBucket bucket = new CountingBucket(fs);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    BucketStore store = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), 0),
        bucket, new BucketStoreMetrics(registry), () -> 0);
    store.sync();
    bucket.reset();

    List<SeriesChunks> got = store.select("t", 0, 2 * HOUR,
        List.of(Matcher.eq("__name__", "metric_4"), Matcher.eq("instance", "host-1234")));

    assertThat(got).extracting(SeriesChunks::labels)
        .containsExactly(Labels.of("__name__", "metric_4", "instance", "host-1234", "zone", "z1"));
    SeriesChunks.Samples samples = got.get(0).samples(0, 2 * HOUR);
    assertThat(samples.size()).isEqualTo(240);
    assertThat(samples.values()[1]).isEqualTo(1234 + 30_000 % 7_000);
    assertThat(blockBytes).isGreaterThan(1_000_000);
    assertThat(bucket.bytesRead()).as("bytes read of a %d-byte block", blockBytes).isLessThan(blockBytes / 100);
    assertThat(bucket.reads).allMatch(r -> r.file().equals("index") || r.file().equals("chunks/000001"))
        .allMatch(r -> r.bytes() <= 8 * 1024);
    assertThat(bucket.chunkBytesRead()).isPositive();
    assertThat(registry.get("weir.bucket.store.bucket.read").tag("file", "chunks").counter().count())
        .isEqualTo(bucket.chunkBytesRead());
  }

  @Test
  void histogramChunksComeBackWithTheirEncodingAndBytes() throws IOException {
    FilesystemBucket fs = new FilesystemBucket(dir.resolve("bucket"));
    List<ChunkData> ints = TestBlocks.histogramChunks(false, 0, 15_000, 400);
    List<ChunkData> floats = TestBlocks.histogramChunks(true, 0, 15_000, 400);
    new TestBlocks.Builder()
        .addChunks(Labels.of("__name__", "h", "kind", "float"), floats)
        .addChunks(Labels.of("__name__", "h", "kind", "int"), ints)
        .addRange(Labels.of("__name__", "x"), 0, 2 * HOUR, 30_000, ts -> ts)
        .upload(fs, dir.resolve("scratch"), "t", 0, 2 * HOUR, 1);
    BucketStore store = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), 0),
        fs, new BucketStoreMetrics(new SimpleMeterRegistry()), () -> 0);
    store.sync();

    List<SeriesChunks> got = store.select("t", 0, 2 * HOUR, List.of(Matcher.eq("__name__", "h")));

    assertThat(got).extracting(s -> s.labels().get("kind")).containsExactly("float", "int");
    assertSameChunks(got.get(0).chunks(), floats, Chunks.FLOAT_HISTOGRAM);
    assertSameChunks(got.get(1).chunks(), ints, Chunks.HISTOGRAM);
  }

  private static void assertSameChunks(List<ChunkData> got, List<ChunkData> want, byte encoding) {
    assertThat(got).hasSameSizeAs(want).hasSizeGreaterThan(1);
    for (int i = 0; i < want.size(); i++) {
      assertThat(got.get(i).encoding()).as("encoding of chunk %d", i).isEqualTo(encoding);
      assertThat(got.get(i).bytes()).as("bytes of chunk %d", i).isEqualTo(want.get(i).bytes());
    }
  }
}
