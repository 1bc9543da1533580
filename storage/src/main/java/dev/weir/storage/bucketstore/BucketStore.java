package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.labels.Utf8Order;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * Serves the blocks of a bucket (Mimir's store-gateway bucket store). {@link #sync()} lists the
 * bucket, loads new blocks ({@link BlockLoader}: meta.json and the index header, from the local
 * cache when it has it) and drops blocks that left it; {@link BucketStoreSyncer} runs it every
 * sync interval. Queries take the set of blocks as it is when they start, skip blocks whose time
 * range misses theirs, read each remaining block by range ({@link BucketBlock}) and merge the
 * series of all blocks ({@link SeriesMerge}).
 *
 * <p>Errors: a block deleted from the bucket while a query reads it, or any bucket read error, is
 * a {@link ServerErrorException} (retry); a query over the chunk-bytes limit is a
 * {@link ClientErrorException} with HTTP status 429.
 *
 * <p>Thread-safe: queries run concurrently with each other and with a sync; syncs are serialized.
 */
public final class BucketStore {
  private final BucketStoreConfig config;
  private final Bucket bucket;
  private final BucketStoreMetrics metrics;
  private final BlockSet blocks;
  private final LongSupplier clock;
  private volatile Runnable onBlockGone = () -> {};

  /**
   * @param bucket read only: the store never writes or deletes blocks
   * @param clock wall time in milliseconds (for the last-sync gauge)
   */
  public BucketStore(BucketStoreConfig config, Bucket bucket, BucketStoreMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.bucket = new MeteredBucket(bucket, metrics);
    this.metrics = metrics;
    this.clock = clock;
    this.blocks = new BlockSet(new BlockLoader(this.bucket, new IndexHeaderCache(config.syncDir()), metrics),
        new IndexHeaderCache(config.syncDir()), metrics);
  }

  /** Called when a query finds a block's files gone, so the next sync need not wait its interval. */
  public void onBlockGone(Runnable listener) {
    this.onBlockGone = listener;
  }

  public BucketStoreConfig config() {
    return config;
  }

  public String describeBucket() {
    return bucket.describe();
  }

  /**
   * Lists the bucket once: loads new (and replaced) blocks, drops deleted ones. A block that fails
   * to load is counted and tried again next time; the sync itself fails only when the bucket
   * cannot be listed.
   */
  public synchronized void sync() throws IOException {
    metrics.syncs.increment();
    List<Bucket.BlockRef> refs;
    try {
      refs = bucket.list();
    } catch (IOException | RuntimeException e) {
      metrics.syncFailures.increment();
      throw e;
    }
    blocks.update(refs);
    metrics.lastSuccessfulSyncSeconds.set(clock.getAsLong() / 1000);
  }

  /** The loaded blocks of a tenant, by ID (a snapshot). */
  public List<String> blockIds(String tenant) {
    return new ArrayList<>(blocks.snapshot().getOrDefault(tenant, Map.of()).keySet());
  }

  /** Series matching every matcher with their chunks overlapping {@code [mint, maxt]} (inclusive), label order. */
  public List<SeriesChunks> select(String tenant, long mint, long maxt, List<Matcher> matchers) {
    Timer.Sample t = Timer.start();
    try {
      QueryBudget budget = new QueryBudget(config.maxChunkBytesPerQuery());
      List<List<SeriesChunks>> perBlock = new ArrayList<>();
      for (BucketBlock b : overlapping(tenant, mint, maxt)) {
        perBlock.add(call(b, () -> b.select(mint, maxt, matchers, budget)));
      }
      return perBlock.isEmpty() ? List.of() : SeriesMerge.merge(perBlock);
    } catch (ClientErrorException e) {
      metrics.queryRefused(e.reason());
      throw e;
    } finally {
      t.stop(metrics.queryDuration("select"));
    }
  }

  /** Sorted label names of the series matching the matchers in blocks overlapping {@code [mint, maxt]}. */
  public List<String> labelNames(String tenant, long mint, long maxt, List<Matcher> matchers) {
    Timer.Sample t = Timer.start();
    try {
      TreeSet<String> names = new TreeSet<>(Utf8Order.COMPARATOR);
      for (BucketBlock b : overlapping(tenant, mint, maxt)) {
        names.addAll(call(b, () -> b.labelNames(matchers)));
      }
      return new ArrayList<>(names);
    } finally {
      t.stop(metrics.queryDuration("label_names"));
    }
  }

  /** Sorted values of label {@code name}, filtered like {@link #labelNames}. */
  public List<String> labelValues(String tenant, String name, long mint, long maxt, List<Matcher> matchers) {
    Timer.Sample t = Timer.start();
    try {
      TreeSet<String> values = new TreeSet<>(Utf8Order.COMPARATOR);
      for (BucketBlock b : overlapping(tenant, mint, maxt)) {
        values.addAll(call(b, () -> b.labelValues(name, matchers)));
      }
      return new ArrayList<>(values);
    } finally {
      t.stop(metrics.queryDuration("label_values"));
    }
  }

  /** The tenant's loaded blocks whose time range meets {@code [mint, maxt]}, in ID (time) order. */
  private List<BucketBlock> overlapping(String tenant, long mint, long maxt) {
    List<BucketBlock> out = new ArrayList<>();
    for (BucketBlock b : blocks.snapshot().getOrDefault(tenant, Map.of()).values()) {
      if (b.overlaps(mint, maxt)) {
        out.add(b);
      }
    }
    return out;
  }

  private interface BlockRead<T> {
    T read() throws IOException;
  }

  private <T> T call(BucketBlock block, BlockRead<T> read) {
    try {
      return read.read();
    } catch (NoSuchFileException e) {
      onBlockGone.run();
      throw new ServerErrorException(block + " left the bucket while the query read it (" + e.getMessage()
          + "); retry: a sync to drop it is due", e);
    } catch (IOException e) {
      throw new ServerErrorException("reading " + block + ": " + e.getMessage(), e);
    }
  }
}
