package dev.weir.storage.bucketstore;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Settings of a {@link BucketStore} (flags {@code blocks-storage.bucket-store.*}, Mimir's names).
 * The constructor checks them and names the flag of a bad value.
 *
 * @param syncInterval how often the bucket is listed to load new blocks and drop deleted ones
 * @param syncDir local directory of the index-header cache
 * @param maxChunkBytesPerQuery chunk bytes one query may fetch from the bucket; 0 for no limit
 */
public record BucketStoreConfig(Duration syncInterval, Path syncDir, long maxChunkBytesPerQuery) {
  public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofMinutes(15);
  /**
   * 256 MiB of chunks is ~1M series-days at a 15 s scrape interval (~1.3 bytes per sample): far
   * above a dashboard query, well below the heap of a default store-gateway.
   */
  public static final long DEFAULT_MAX_CHUNK_BYTES_PER_QUERY = 256L << 20;

  public BucketStoreConfig {
    if (syncInterval.toMillis() < 1) {
      throw new IllegalArgumentException("blocks-storage.bucket-store.sync-interval must be at least 1ms");
    }
    if (syncDir.toString().isBlank()) {
      throw new IllegalArgumentException("blocks-storage.bucket-store.sync-dir must not be empty");
    }
    if (maxChunkBytesPerQuery < 0) {
      throw new IllegalArgumentException("blocks-storage.bucket-store.max-chunk-bytes-per-query must not be"
          + " negative");
    }
  }

  /** Defaults with the given sync directory. */
  public static BucketStoreConfig defaults(Path syncDir) {
    return new BucketStoreConfig(DEFAULT_SYNC_INTERVAL, syncDir, DEFAULT_MAX_CHUNK_BYTES_PER_QUERY);
  }
}
