package dev.weir.storage.compactor;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retention on the bucket: mark past retention, delete after the delay, finish cut-short deletions. */
class BlocksCleanerTest {
  static final Duration RETENTION = Duration.ofHours(24);
  static final Duration DELAY = Duration.ofHours(12);

  @TempDir Path dir;
  FilesystemBucket bucket;
  SimpleMeterRegistry registry = new SimpleMeterRegistry();
  AtomicLong now = new AtomicLong(100 * HOUR);
  BlocksCleaner cleaner;

  @BeforeEach
  void setUp() throws IOException {
    bucket = new FilesystemBucket(dir.resolve("bucket"));
    cleaner = new BlocksCleaner(new BlocksCleanerConfig(DELAY, Duration.ofMinutes(15)), bucket,
        tenant -> tenant.equals("forever") ? Duration.ZERO : RETENTION, new BlocksCleanerMetrics(registry), now::get);
  }

  /** A block of {@code tenant} covering {@code [from, to)} ms with a sample a minute. */
  String block(String tenant, long from, long to, int entropy) throws IOException {
    return new TestBlocks.Builder().addRange(Labels.of("__name__", "up"), from, to, 60_000, ts -> 1)
        .upload(bucket, dir.resolve("scratch"), tenant, from, to, entropy);
  }

  List<String> ids() throws IOException {
    return bucket.list().stream().map(Bucket.BlockRef::id).toList();
  }

  double counter(String name) {
    return registry.get(name).counter().count();
  }

  @Test
  void marksBlocksPastRetentionAndDeletesThemOnlyOnceTheDelayHasPassed() throws IOException {
    String old = block("t", 10 * HOUR, 12 * HOUR, 1);
    String recent = block("t", 90 * HOUR, 92 * HOUR, 2);

    assertThat(cleaner.runOnce()).isEqualTo(new BlocksCleaner.Result(1, 0, 0));
    assertThat(ids()).as("marked, not yet deleted").containsExactly(old, recent);
    DeletionMark mark = Objects.requireNonNull(DeletionMark.read(bucket, "t", old));
    assertThat(mark).isEqualTo(new DeletionMark(old, 100 * HOUR / 1000));
    assertThat(DeletionMark.read(bucket, "t", recent)).isNull();

    now.addAndGet(DELAY.toMillis() - 1000);
    assertThat(cleaner.runOnce()).as("a second before the delay ends").isEqualTo(new BlocksCleaner.Result(0, 0, 0));
    assertThat(ids()).containsExactly(old, recent);

    now.addAndGet(1000);
    assertThat(cleaner.runOnce()).isEqualTo(new BlocksCleaner.Result(0, 1, 0));
    assertThat(ids()).containsExactly(recent);
    assertThat(dir.resolve("bucket/t/" + old)).doesNotExist();
    assertThat(counter("weir.compactor.blocks.marked.for.deletion")).isEqualTo(1);
    assertThat(counter("weir.compactor.blocks.cleaned")).isEqualTo(1);
    assertThat(counter("weir.compactor.block.cleanup.completed")).isEqualTo(3);
    assertThat(registry.get("weir.compactor.block.cleanup.last.successful.run.timestamp.seconds").gauge().value())
        .isEqualTo((100 * HOUR + DELAY.toMillis()) / 1000.0);
  }

  @Test
  void keepsBlocksWithASampleInsideRetentionAndTenantsWithoutRetention() throws IOException {
    // maxTime is exclusive: a block ending exactly at now - retention has no sample inside it.
    String atEdge = block("t", 74 * HOUR, 76 * HOUR, 1);
    String straddling = block("t", 75 * HOUR, 76 * HOUR + 1, 2);
    String forever = block("forever", 0, 2 * HOUR, 3);

    assertThat(cleaner.runOnce()).isEqualTo(new BlocksCleaner.Result(1, 0, 0));
    assertThat(DeletionMark.read(bucket, "t", atEdge)).isNotNull();
    assertThat(DeletionMark.read(bucket, "t", straddling)).isNull();
    assertThat(DeletionMark.read(bucket, "forever", forever)).isNull();

    now.addAndGet(DELAY.toMillis());
    cleaner.runOnce();
    assertThat(ids()).containsExactlyInAnyOrder(straddling, forever);
  }

  @Test
  void finishesADeletionCutShortAndLeavesUnfinishedUploadsAlone() throws IOException {
    String old = block("t", 10 * HOUR, 12 * HOUR, 1);
    cleaner.runOnce();
    Path blockDir = dir.resolve("bucket/t/" + old);
    // What a crash inside Bucket.delete leaves: meta.json (first) and the index gone, the rest there.
    Files.delete(blockDir.resolve("meta.json"));
    Files.delete(blockDir.resolve("index"));
    Path upload = Files.createDirectories(dir.resolve("bucket/t/.upload-" + block("u", 90 * HOUR, 91 * HOUR, 9)));
    Files.writeString(upload.resolve("index"), "partial", StandardCharsets.UTF_8);
    assertThat(bucket.list()).extracting(Bucket.BlockRef::id).doesNotContain(old);

    assertThat(cleaner.runOnce()).as("finished before the delay: readers stopped at the missing meta.json")
        .isEqualTo(new BlocksCleaner.Result(0, 1, 0));
    assertThat(blockDir).doesNotExist();
    assertThat(upload).as("an upload in progress is its writer's business").exists();
    assertThat(bucket.listIncomplete()).extracting(Bucket.BlockRef::id).doesNotContain(old);
  }

  @Test
  void aBlockThatCannotBeMarkedIsCountedAndRetriedWhileTheOthersAreHandled() throws IOException {
    String stuck = block("t", 10 * HOUR, 12 * HOUR, 1);
    String other = block("t", 20 * HOUR, 22 * HOUR, 2);
    Set<String> refused = new HashSet<>(Set.of(stuck));
    Bucket failing = (Bucket) Proxy.newProxyInstance(Bucket.class.getClassLoader(), new Class<?>[] {Bucket.class},
        (proxy, method, args) -> {
          if (method.getName().equals("putFile") && refused.contains((String) args[1])) {
            throw new IOException("permission denied");
          }
          try {
            return method.invoke(bucket, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    BlocksCleaner c = new BlocksCleaner(new BlocksCleanerConfig(DELAY, Duration.ofMinutes(15)), failing,
        tenant -> RETENTION, new BlocksCleanerMetrics(registry), now::get);

    assertThat(c.runOnce()).isEqualTo(new BlocksCleaner.Result(1, 0, 1));
    assertThat(DeletionMark.read(bucket, "t", other)).isNotNull();
    assertThat(DeletionMark.read(bucket, "t", stuck)).isNull();
    assertThat(counter("weir.compactor.block.cleanup.failures")).isEqualTo(1);
    assertThat(counter("weir.compactor.block.cleanup.failed")).isEqualTo(1);
    assertThat(registry.get("weir.compactor.block.cleanup.last.successful.run.timestamp.seconds").gauge().value())
        .as("no successful run yet").isZero();

    refused.clear();
    assertThat(c.runOnce()).isEqualTo(new BlocksCleaner.Result(1, 0, 0));
    assertThat(DeletionMark.read(bucket, "t", stuck)).isNotNull();
    assertThat(counter("weir.compactor.block.cleanup.completed")).isEqualTo(1);
  }

  @Test
  void replacesADamagedMarkSoTheDelayStartsAgain() throws IOException {
    String old = block("t", 10 * HOUR, 12 * HOUR, 1);
    bucket.putFile("t", old, DeletionMark.FILE, "{\"id\": ".getBytes(StandardCharsets.UTF_8));

    assertThat(cleaner.runOnce()).isEqualTo(new BlocksCleaner.Result(0, 0, 0));
    assertThat(DeletionMark.read(bucket, "t", old)).isEqualTo(new DeletionMark(old, 100 * HOUR / 1000));
    now.addAndGet(DELAY.toMillis());
    assertThat(cleaner.runOnce().deleted()).isEqualTo(1);
  }
}
