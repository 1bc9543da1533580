package dev.weir.storage.bucketstore;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
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
}
