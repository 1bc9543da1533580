package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loaded blocks of every tenant, as an immutable snapshot that {@link #update} replaces
 * whole: a query keeps the snapshot it started with, so a block dropped meanwhile is still
 * readable by that query (from the bucket, while its files last).
 *
 * <p>Thread-safe: one writer ({@link BucketStore#sync()} is synchronized), any number of readers.
 */
final class BlockSet {
  private static final Logger log = LoggerFactory.getLogger(BlockSet.class);

  private final BlockLoader loader;
  private final IndexHeaderCache cache;
  private final BucketStoreMetrics metrics;
  /** Tenant → block ID → block; IDs are ULIDs, so ID order is time order. */
  private volatile Map<String, Map<String, BucketBlock>> snapshot = Map.of();
  private boolean cacheSwept;

  BlockSet(BlockLoader loader, IndexHeaderCache cache, BucketStoreMetrics metrics) {
    this.loader = loader;
    this.cache = cache;
    this.metrics = metrics;
  }

  Map<String, Map<String, BucketBlock>> snapshot() {
    return snapshot;
  }

  /** Makes the set match the bucket's listing. */
  void update(List<Bucket.BlockRef> listed) {
    Map<String, Map<String, BucketBlock>> old = snapshot;
    Map<String, TreeMap<String, BucketBlock>> next = new HashMap<>();
    for (Bucket.BlockRef ref : listed) {
      BucketBlock previous = old.getOrDefault(ref.tenant(), Map.of()).get(ref.id());
      BucketBlock b = load(ref, previous);
      if (b != null) {
        next.computeIfAbsent(ref.tenant(), k -> new TreeMap<>()).put(ref.id(), b);
      }
    }
    Map<String, Map<String, BucketBlock>> frozen = new HashMap<>();
    next.forEach((tenant, blocks) -> frozen.put(tenant, Collections.unmodifiableMap(blocks)));
    snapshot = Map.copyOf(frozen);
    int loaded = 0;
    for (Map<String, BucketBlock> blocks : frozen.values()) {
      loaded += blocks.size();
    }
    metrics.blocksLoaded.set(loaded);
    dropGone(old, frozen);
    if (!cacheSwept) {
      sweepCache(frozen);
    }
  }

  private @Nullable BucketBlock load(Bucket.BlockRef ref, @Nullable BucketBlock previous) {
    try {
      if (loader.markedForDeletion(ref.tenant(), ref.id())) {
        return null; // about to be deleted: stop reading it now, not when its files vanish
      }
      BucketBlock b = loader.load(ref.tenant(), ref.id(), previous);
      if (b != previous) {
        metrics.blockLoads.increment();
        log.info("msg=\"block loaded\" tenant={} block={} minTime={} maxTime={} replaced={}", ref.tenant(),
            ref.id(), b.meta().minTime(), b.meta().maxTime(), previous != null);
      }
      return b;
    } catch (NoSuchFileException e) {
      return null; // deleted between the listing and the load: the next sync will not list it
    } catch (IOException | RuntimeException e) {
      metrics.blockLoadFailures.increment();
      log.error("msg=\"cannot load block, retrying next sync\" tenant={} block={} err=\"{}\"", ref.tenant(),
          ref.id(), e.toString());
      return previous; // a block that was serving keeps serving through a transient error
    }
  }

  private void dropGone(Map<String, Map<String, BucketBlock>> old, Map<String, Map<String, BucketBlock>> now) {
    for (Map.Entry<String, Map<String, BucketBlock>> t : old.entrySet()) {
      Map<String, BucketBlock> kept = now.getOrDefault(t.getKey(), Map.of());
      for (String id : t.getValue().keySet()) {
        if (!kept.containsKey(id)) {
          metrics.blockDrops.increment();
          log.info("msg=\"block dropped: deleted or marked for deletion\" tenant={} block={}", t.getKey(), id);
          deleteCache(t.getKey(), id);
        }
      }
    }
  }

  /** Once, at the first sync: removes cached headers of blocks deleted while the process was down. */
  private void sweepCache(Map<String, Map<String, BucketBlock>> now) {
    Map<String, Set<String>> keep = new HashMap<>();
    now.forEach((tenant, blocks) -> keep.put(tenant, new HashSet<>(blocks.keySet())));
    try {
      cache.retainOnly(keep);
      cacheSwept = true;
    } catch (IOException e) {
      log.warn("msg=\"cannot clean the index-header cache\" err=\"{}\"", e.toString());
    }
  }

  private void deleteCache(String tenant, String id) {
    try {
      cache.delete(tenant, id);
    } catch (IOException | RuntimeException e) {
      log.warn("msg=\"cannot delete a cached index header\" tenant={} block={} err=\"{}\"", tenant, id, e.toString());
    }
  }
}
