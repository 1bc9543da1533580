package dev.weir.storage.compactor;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces retention on a bucket, as Mimir's compactor {@code BlocksCleaner} does: a block whose
 * samples are all older than its tenant's retention ({@code maxTime <= now − retention};
 * {@code maxTime} is exclusive) gets a {@link DeletionMark}; a marked block is deleted once the
 * deletion delay has passed since its mark. Store-gateways drop a block when they see its mark,
 * so by the time its files vanish no reader uses it. {@link Bucket#delete} removes meta.json
 * first and the mark last, so a deletion cut short (crash, bucket error) leaves a block without
 * meta.json but with its mark, which the next run finds in {@link Bucket#listIncomplete} and
 * finishes. Marking and deleting are idempotent, so a second cleaner on the same bucket would do
 * no harm, only twice the requests.
 *
 * <p>Not thread-safe: one thread runs {@link #runOnce()} (one job at a time).
 */
public final class BlocksCleaner {
  private static final Logger log = LoggerFactory.getLogger(BlocksCleaner.class);

  /** What one run did. */
  public record Result(int marked, int deleted, int failures) {}

  private final BlocksCleanerConfig config;
  private final Bucket bucket;
  private final Function<String, Duration> retention;
  private final BlocksCleanerMetrics metrics;
  private final LongSupplier clock;
  private int marked;
  private int deleted;
  private int failures;

  /**
   * @param retention a tenant's retention ({@link Duration#ZERO}: keep forever), asked per run
   * @param clock wall time in milliseconds
   */
  public BlocksCleaner(BlocksCleanerConfig config, Bucket bucket, Function<String, Duration> retention,
      BlocksCleanerMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.bucket = bucket;
    this.retention = retention;
    this.metrics = metrics;
    this.clock = clock;
  }

  /**
   * One pass over the bucket: finishes cut-short deletions, deletes marked blocks past the delay,
   * marks blocks past retention. A block that fails is counted and tried again next run.
   *
   * @throws IOException when the bucket cannot be listed
   */
  public Result runOnce() throws IOException {
    metrics.runsStarted.increment();
    marked = 0;
    deleted = 0;
    failures = 0;
    long now = clock.getAsLong();
    try {
      for (Bucket.BlockRef ref : bucket.listIncomplete()) {
        finishDeletion(ref);
      }
      for (Bucket.BlockRef ref : bucket.list()) {
        visit(ref, now);
      }
    } catch (IOException | RuntimeException e) {
      metrics.runsFailed.increment();
      throw e;
    }
    if (failures > 0) {
      metrics.runsFailed.increment();
    } else {
      metrics.runsCompleted.increment();
      metrics.lastSuccessfulRunSeconds.set(now / 1000);
    }
    return new Result(marked, deleted, failures);
  }

  /** A block without meta.json but with a mark is one whose deletion was cut short. */
  private void finishDeletion(Bucket.BlockRef ref) {
    try {
      if (hasMeta(ref) || !DeletionMark.exists(bucket, ref.tenant(), ref.id())) {
        return; // an upload in progress or abandoned: its writer cleans it up
      }
      log.info("msg=\"finishing the deletion of a block\" tenant={} block={}", ref.tenant(), ref.id());
      delete(ref);
    } catch (IOException | RuntimeException e) {
      fail(ref, "finish deleting", e);
    }
  }

  private void visit(Bucket.BlockRef ref, long now) {
    try {
      DeletionMark mark = markOf(ref, now);
      if (mark != null) {
        if (now >= mark.deletionTimeSeconds() * 1000 + config.deletionDelay().toMillis()) {
          log.info("msg=\"deleting a block marked for deletion\" tenant={} block={} markedAt={}", ref.tenant(),
              ref.id(), mark.deletionTimeSeconds());
          delete(ref);
        }
        return;
      }
      Duration keep = retention.apply(ref.tenant());
      if (keep.isZero()) {
        return;
      }
      BlockMeta meta = BlockMeta.parse(new String(bucket.meta(ref.tenant(), ref.id()), StandardCharsets.UTF_8),
          ref.tenant() + "/" + ref.id());
      if (meta.maxTime() <= now - keep.toMillis()) {
        log.info("msg=\"marking a block past retention for deletion\" tenant={} block={} maxTime={} retention={}",
            ref.tenant(), ref.id(), meta.maxTime(), keep);
        putMark(ref, now);
        marked++;
        metrics.blocksMarked.increment();
      }
    } catch (NoSuchFileException e) {
      // deleted since the listing: nothing to do
    } catch (IOException | RuntimeException e) {
      fail(ref, "clean up", e);
    }
  }

  /** The block's mark; a damaged one is replaced by a new mark (the delay starts again). */
  private @Nullable DeletionMark markOf(Bucket.BlockRef ref, long now) throws IOException {
    try {
      return DeletionMark.read(bucket, ref.tenant(), ref.id());
    } catch (DeletionMark.DamagedException e) {
      log.warn("msg=\"replacing a damaged deletion mark\" tenant={} block={} err=\"{}\"", ref.tenant(), ref.id(),
          e.getMessage());
      putMark(ref, now);
      return new DeletionMark(ref.id(), now / 1000);
    }
  }

  private void putMark(Bucket.BlockRef ref, long now) throws IOException {
    bucket.putFile(ref.tenant(), ref.id(), DeletionMark.FILE, new DeletionMark(ref.id(), now / 1000).toJson());
  }

  private boolean hasMeta(Bucket.BlockRef ref) throws IOException {
    try {
      bucket.meta(ref.tenant(), ref.id());
      return true;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  private void delete(Bucket.BlockRef ref) throws IOException {
    bucket.delete(ref.tenant(), ref.id());
    deleted++;
    metrics.blocksCleaned.increment();
  }

  private void fail(Bucket.BlockRef ref, String what, Exception e) {
    failures++;
    metrics.blockFailures.increment();
    log.error("msg=\"cannot {} a block; retrying next run\" tenant={} block={} err=\"{}\"", what, ref.tenant(),
        ref.id(), e.toString());
  }
}
