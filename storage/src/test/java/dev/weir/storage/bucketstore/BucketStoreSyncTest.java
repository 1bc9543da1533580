package dev.weir.storage.bucketstore;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Block discovery: new blocks appear, deleted ones disappear, queries in flight survive a sync. */
class BucketStoreSyncTest {
  @TempDir Path dir;
  FilesystemBucket fs;
  CountingBucket bucket;
  SimpleMeterRegistry registry = new SimpleMeterRegistry();
  BucketStore store;

  @BeforeEach
  void setUp() throws IOException {
    fs = new FilesystemBucket(dir.resolve("bucket"));
    bucket = new CountingBucket(fs);
    store = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), 0), bucket,
        new BucketStoreMetrics(registry), () -> 1_700_000_000_000L);
  }

  /** A block of tenant t in [hour h, h+1) with one series {job=name}, a sample a minute. */
  String upload(int h, String job) throws IOException {
    return new TestBlocks.Builder()
        .addRange(Labels.of("__name__", "up", "job", job), h * HOUR, (h + 1) * HOUR, 60_000, ts -> h)
        .upload(bucket, dir.resolve("scratch"), "t", h * HOUR, (h + 1) * HOUR, h);
  }

  List<String> jobs() {
    return store.select("t", 0, 10 * HOUR, List.of()).stream().map(s -> s.labels().get("job")).toList();
  }

  double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  double counter(String name) {
    return registry.get(name).counter().count();
  }

  @Test
  void aDeletedBlockDisappearsAndANewOneAppearsAfterASync() throws IOException {
    String a = upload(0, "a");
    String b = upload(1, "b");
    store.sync();
    assertThat(store.blockIds("t")).containsExactly(a, b);
    assertThat(jobs()).containsExactly("a", "b");
    assertThat(gauge("weir.bucket.store.blocks.loaded")).isEqualTo(2);
    assertThat(gauge("weir.bucket.store.last.successful.sync.timestamp.seconds")).isEqualTo(1_700_000_000);

    fs.delete("t", a);
    String c = upload(2, "c");
    assertThatThrownBy(this::jobs).as("a query on the deleted block before the next sync fails, retryable")
        .isInstanceOf(ServerErrorException.class).hasMessageContaining(a);
    store.sync();
    assertThat(store.blockIds("t")).containsExactly(b, c);
    assertThat(jobs()).containsExactly("b", "c");
    assertThat(counter("weir.bucket.store.block.drops")).isEqualTo(1);
    assertThat(counter("weir.bucket.store.block.loads")).isEqualTo(3);
    assertThat(dir.resolve("sync/t/" + a)).doesNotExist();
    assertThat(dir.resolve("sync/t/" + c + "/index-header")).exists();
  }

  @Test
  void aBlockMarkedForDeletionIsDroppedAndANewlyListedMarkedBlockNeverLoaded() throws IOException {
    String a = upload(0, "a");
    String b = upload(1, "b");
    store.sync();
    assertThat(store.blockIds("t")).containsExactly(a, b);

    fs.putFile("t", a, DeletionMark.FILE, new DeletionMark(a, 1_700_000_000L).toJson());
    String c = upload(2, "c");
    fs.putFile("t", c, DeletionMark.FILE, new DeletionMark(c, 1_700_000_000L).toJson());
    store.sync();
    assertThat(fs.list()).as("marked blocks are still in the bucket").hasSize(3);
    assertThat(store.blockIds("t")).as("but not served").containsExactly(b);
    assertThat(jobs()).containsExactly("b");
    assertThat(counter("weir.bucket.store.block.drops")).isEqualTo(1);
    assertThat(counter("weir.bucket.store.block.loads")).as("c was never loaded").isEqualTo(2);
  }

  @Test
  void aQueryOnABlockDroppedMidwayFinishesWhileItsFilesRemain() throws IOException {
    String a = upload(0, "a");
    upload(1, "b");
    store.sync();
    bucket.beforeRead = r -> {
      if (r.file().startsWith("chunks/") && r.id().equals(a) && !bucket.hidden.contains(a)) {
        bucket.hidden.add(a);
        syncQuietly();
      }
    };
    assertThat(jobs()).containsExactly("a", "b");
    assertThat(store.blockIds("t")).doesNotContain(a);
    assertThat(jobs()).containsExactly("b");
  }

  @Test
  void aQueryOnABlockDeletedMidwayFailsAsRetryable() throws IOException {
    String a = upload(0, "a");
    upload(1, "b");
    store.sync();
    bucket.beforeRead = r -> {
      if (r.file().startsWith("chunks/") && r.id().equals(a)) {
        try {
          fs.delete("t", a);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        syncQuietly();
      }
    };
    assertThatThrownBy(this::jobs).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining(a).hasMessageContaining("left the bucket");
    assertThat(jobs()).containsExactly("b");
  }

  private void syncQuietly() {
    try {
      store.sync();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void aBlockReplacedUnderTheSameIdIsReloaded() throws IOException {
    String id = upload(0, "a");
    store.sync();
    assertThat(jobs()).containsExactly("a");
    String again = new TestBlocks.Builder()
        .addRange(Labels.of("__name__", "up", "job", "a"), 0, HOUR, 60_000, ts -> 0)
        .addRange(Labels.of("__name__", "up", "job", "late"), 0, HOUR, 60_000, ts -> 0)
        .upload(bucket, dir.resolve("scratch2"), "t", 0, HOUR, 0);
    assertThat(again).isEqualTo(id);
    store.sync();
    assertThat(jobs()).containsExactly("a", "late");
    assertThat(counter("weir.bucket.store.block.loads")).isEqualTo(2);
  }

  @Test
  void aBlockThatCannotBeLoadedIsCountedAndTheOthersServed() throws IOException {
    String bad = upload(0, "a");
    upload(1, "b");
    Path index = dir.resolve("bucket/t/" + bad + "/index");
    Corrupt.flipByte(index, Files.size(index) - 10); // inside the TOC
    store.sync();
    assertThat(jobs()).containsExactly("b");
    assertThat(counter("weir.bucket.store.block.load.failures")).isEqualTo(1);
    store.sync();
    assertThat(counter("weir.bucket.store.block.load.failures")).as("retried every sync").isEqualTo(2);
  }

  @Test
  void aFailedListingCountsAndKeepsTheLoadedBlocks() throws IOException {
    upload(0, "a");
    store.sync();
    CountingBucket unreachable = new CountingBucket(fs);
    unreachable.listFailure = new IOException("bucket unreachable");
    BucketStore broken = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync2"), 0),
        unreachable, new BucketStoreMetrics(registry), () -> 0);
    assertThatThrownBy(broken::sync).hasMessageContaining("bucket unreachable");
    assertThat(counter("weir.bucket.store.sync.failures")).isEqualTo(1);
    BucketStoreSyncer syncer = new BucketStoreSyncer(broken);
    syncer.runOnce();
    assertThat(syncer.notReadyReason()).contains("first bucket sync has not finished").contains("bucket unreachable");
    BucketStoreSyncer ok = new BucketStoreSyncer(store);
    assertThat(ok.notReadyReason()).contains("first bucket sync has not finished");
    ok.runOnce();
    assertThat(ok.notReadyReason()).isNull();
    assertThat(store.select("t", 0, HOUR, List.of(Matcher.eq("job", "a")))).extracting(SeriesChunks::labels)
        .containsExactly(Labels.of("__name__", "up", "job", "a"));
  }

  @Test
  void theSyncThreadLoadsAtStartAndResyncsAtOnceWhenAQueryFindsABlockGone() throws Exception {
    String a = upload(0, "a");
    upload(1, "b");
    BucketStoreSyncer syncer = new BucketStoreSyncer(store);
    try {
      syncer.start();
      await().atMost(10, TimeUnit.SECONDS).until(() -> syncer.notReadyReason() == null);
      assertThat(jobs()).containsExactly("a", "b");
      fs.delete("t", a);
      assertThatThrownBy(this::jobs).isInstanceOf(ServerErrorException.class);
      // The sync interval is 15 minutes: only the wake-up can drop the block within the wait.
      await().atMost(10, TimeUnit.SECONDS).until(() -> !store.blockIds("t").contains(a));
      assertThat(jobs()).containsExactly("b");
    } finally {
      syncer.close();
    }
  }
}
