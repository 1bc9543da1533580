package dev.weir.storage.bucketstore;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.Corrupt;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The index-header cache on local disk: reused by a restarted store, rebuilt when damaged. */
class IndexHeaderCacheTest {
  @TempDir Path dir;
  FilesystemBucket fs;
  String id;

  @BeforeEach
  void setUp() throws IOException {
    fs = new FilesystemBucket(dir.resolve("bucket"));
    TestBlocks.Builder b = new TestBlocks.Builder();
    for (int s = 0; s < 200; s++) {
      int v = s;
      b.addRange(Labels.of("__name__", "m", "instance", "host-" + s), 0, HOUR, 30_000, ts -> v);
    }
    id = b.upload(fs, dir.resolve("scratch"), "t", 0, HOUR, 1);
  }

  /** A fresh store (a restarted process) over the same bucket and sync dir. */
  Started start() throws IOException {
    CountingBucket counting = new CountingBucket(fs);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    BucketStore store = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), 0),
        counting, new BucketStoreMetrics(registry), () -> 0);
    store.sync();
    return new Started(store, counting, registry);
  }

  record Started(BucketStore store, CountingBucket bucket, SimpleMeterRegistry registry) {
    double lookups(String outcome) {
      var c = registry.find("weir.bucket.store.index.header.cache").tag("outcome", outcome).counter();
      return c == null ? 0 : c.count();
    }

    void answersExactly() {
      List<SeriesChunks> got = store.select("t", 0, HOUR, List.of(Matcher.eq("instance", "host-42")));
      assertThat(got).extracting(SeriesChunks::labels).containsExactly(Labels.of("__name__", "m", "instance", "host-42"));
      assertThat(got.get(0).samples(0, HOUR).values()).hasSize(120).containsOnly(42.0);
    }
  }

  Path cacheFile() {
    return dir.resolve("sync/t/" + id + "/index-header");
  }

  @Test
  void aRestartReadsTheIndexHeaderFromTheCacheNotTheBucket() throws IOException {
    Started first = start();
    assertThat(first.lookups("missing")).isEqualTo(1);
    assertThat(first.bucket().bytesRead("index")).isGreaterThan(0);
    assertThat(first.bucket().sizeCalls).containsExactly(id + "/" + DeletionMark.FILE, id + "/index");
    assertThat(cacheFile()).exists();

    Started second = start();
    assertThat(second.lookups("hit")).isEqualTo(1);
    assertThat(second.bucket().reads).isEmpty();
    assertThat(second.bucket().sizeCalls).as("the deletion-mark check only").containsExactly(id + "/"
        + DeletionMark.FILE);
    second.answersExactly();
  }

  @Test
  void aCorruptCacheFileIsRebuiltFromTheBucket() throws IOException {
    start();
    Corrupt.flipByte(cacheFile(), Files.size(cacheFile()) / 2);
    Started second = start();
    assertThat(second.lookups("corrupt")).isEqualTo(1);
    assertThat(second.bucket().bytesRead("index")).isGreaterThan(0);
    second.answersExactly();

    Started third = start();
    assertThat(third.lookups("hit")).as("the rebuilt file is good").isEqualTo(1);
    assertThat(third.bucket().reads).isEmpty();
  }

  @Test
  void aTruncatedCacheFileIsRebuiltFromTheBucket() throws IOException {
    start();
    Corrupt.truncate(cacheFile(), 20);
    Started second = start();
    assertThat(second.lookups("corrupt")).isEqualTo(1);
    second.answersExactly();
    assertThat(start().lookups("hit")).isEqualTo(1);
  }

  @Test
  void cachedHeadersOfBlocksDeletedWhileDownAreRemoved() throws IOException {
    start();
    fs.delete("t", id);
    start();
    assertThat(cacheFile().getParent()).doesNotExist();
  }
}
