package dev.weir.storage.tsdb.shipper;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.block.Block;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Uploads every block that head compaction wrote ({@link HeadBlocks}) to the bucket, once: each
 * round (at start, then every {@code ship-interval}) walks every tenant's complete local blocks
 * (those the storage has opened; a compaction's {@code <ulid>.tmp} never is one), skips the ones
 * {@link ShippedBlocks} lists, and uploads the rest oldest first. Before uploading it asks the
 * bucket whether the block is already there (a crash between an upload and the file write), as
 * Mimir's shipper does, and then only records it.
 *
 * <p>A failing or unreachable bucket never blocks ingestion: rounds run on their own thread
 * ({@code tsdb-shipper}); a failed upload is counted, logged, and retried next round, and the
 * block stays on disk, past retention too ({@link ShippedBlocks} is the storage's retention
 * gate).
 *
 * <p>Usage: {@code new Shipper(...).start()}, then {@link #close()}; tests call {@link
 * #shipOnce()} directly. Thread-safety: rounds run on one thread at a time (the shipper's, or
 * the caller of {@link #shipOnce()} when not started); {@link #close()} may come from any thread.
 * The caller owns the storage; the shipper opens the bucket at its first round.
 */
public final class Shipper implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Shipper.class);
  /** How long {@link #close()} waits for an upload in progress (an object store may be slow). */
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

  private final ShipperConfig config;
  private final Tsdb tsdb;
  private final BucketOpener opener;
  private final ShippedBlocks shipped;
  private final ShipperMetrics metrics;
  private final LongSupplier wallClock;
  private final Object wake = new Object();
  private volatile boolean closing;
  /** Opened by the first round that can; only rounds touch it (one thread at a time). */
  private @Nullable Bucket bucket;
  private @Nullable Thread thread;

  /** Opens the bucket; asked again each round until it succeeds. */
  @FunctionalInterface
  public interface BucketOpener {
    Bucket open() throws IOException;
  }

  /**
   * @param opener opens the bucket at the first round; a bucket that cannot be opened (unreachable
   *     at start) fails that round's uploads like a failing bucket, and is opened again next round
   */
  public Shipper(ShipperConfig config, Tsdb tsdb, BucketOpener opener, ShippedBlocks shipped, ShipperMetrics metrics,
      LongSupplier wallClock) {
    this.config = config;
    this.tsdb = tsdb;
    this.opener = opener;
    this.shipped = shipped;
    this.metrics = metrics;
    this.wallClock = wallClock;
  }

  /** What one round did. */
  public record Round(int uploaded, int failed, int pending) {}

  /**
   * One round over every tenant. Bucket failures are counted and logged, never thrown.
   *
   * @return blocks uploaded, uploads failed, and head blocks still not in the bucket
   */
  public Round shipOnce() {
    int uploaded = 0;
    int failed = 0;
    int pending = 0;
    for (String tenant : tsdb.tenants()) {
      TenantDb db = tsdb.existing(tenant);
      if (db == null || closing) {
        continue;
      }
      Round r = shipTenant(tenant, db.blocks());
      uploaded += r.uploaded();
      failed += r.failed();
      pending += r.pending();
    }
    metrics.pendingBlocks.set(pending);
    metrics.syncs.increment();
    return new Round(uploaded, failed, pending);
  }

  private Round shipTenant(String tenant, List<Block> blocks) {
    Set<String> local = new HashSet<>();
    blocks.forEach(b -> local.add(b.meta().ulid()));
    try {
      shipped.retainOnly(tenant, local);
    } catch (IOException e) {
      log.warn("msg=\"cannot update the shipper file\" user={} err=\"{}\"", tenant, e.getMessage());
    }
    int uploaded = 0;
    int failed = 0;
    int pending = 0;
    for (Block b : blocks) { // sorted by min time: oldest first
      String id = b.meta().ulid();
      if (shipped.uploaded(tenant).contains(id)) {
        continue;
      }
      try {
        if (!HeadBlocks.isHeadBlock(b)) {
          continue;
        }
        if (closing) {
          pending++;
          continue;
        }
        Bucket bucket = bucket();
        if (inBucket(bucket, tenant, id)) {
          log.info("msg=\"block already in the bucket (uploaded before a restart); recorded as shipped\" user={}"
              + " block={}", tenant, id);
        } else {
          long t0 = System.nanoTime();
          bucket.upload(tenant, id, b.dir());
          uploaded++;
          metrics.uploads.increment();
          metrics.lastSuccessfulUploadMillis.set(wallClock.getAsLong());
          log.info("msg=\"block shipped\" user={} block={} min_time={} max_time={} samples={} seconds={}", tenant, id,
              b.meta().minTime(), b.meta().maxTime(), b.meta().numSamples(),
              String.format("%.2f", (System.nanoTime() - t0) / 1e9));
        }
      } catch (IOException | RuntimeException e) {
        failed++;
        pending++;
        metrics.uploadFailures.increment();
        log.error("msg=\"shipping a block failed; kept locally and retried next interval\" user={} block={}"
            + " err=\"{}\"", tenant, id, e.toString());
        continue;
      }
      try {
        shipped.markUploaded(tenant, id);
      } catch (IOException e) {
        log.warn("msg=\"block shipped but the shipper file could not be written\" user={} block={} err=\"{}\"",
            tenant, id, e.getMessage());
      }
    }
    return new Round(uploaded, failed, pending);
  }

  private Bucket bucket() throws IOException {
    Bucket b = bucket;
    if (b == null) {
      b = opener.open();
      log.info("msg=\"shipper bucket opened\" bucket={}", b.describe());
      bucket = b;
    }
    return b;
  }

  /**
   * Whether the bucket already holds the block. Only an optimisation: when the lookup fails (an
   * unreachable bucket, or a backend that reports a missing block some other way) the block is
   * uploaded, which replaces any copy with the same ID.
   */
  private static boolean inBucket(Bucket bucket, String tenant, String id) {
    try {
      bucket.meta(tenant, id);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Starts the shipper thread: a round now, then one every interval. */
  public synchronized void start() {
    if (thread != null) {
      throw new IllegalStateException("shipper already started");
    }
    Thread t = new Thread(this::run, "tsdb-shipper");
    t.setDaemon(true);
    thread = t;
    t.start();
    log.info("msg=\"shipper started\" interval={}", config.interval());
  }

  private void run() {
    long every = Math.max(1, config.interval().toMillis());
    while (!closing) {
      try {
        shipOnce();
      } catch (RuntimeException e) {
        log.error("msg=\"shipping round failed; retrying next interval\" err=\"{}\"", e.toString(), e);
      }
      synchronized (wake) {
        if (closing) {
          return;
        }
        try {
          wake.wait(every);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /**
   * Stops the thread: an upload in progress finishes (it is not interrupted: the bucket may be
   * writing files), no new one starts. Waits up to 30 s.
   */
  @Override
  public void close() {
    closing = true;
    synchronized (wake) {
      wake.notifyAll();
    }
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t == null) {
      return;
    }
    try {
      t.join(CLOSE_TIMEOUT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (t.isAlive()) {
      log.warn("msg=\"shipper still uploading after {}; stopping without it\"", CLOSE_TIMEOUT);
    }
  }
}
