package dev.weir.ingester.storegateway;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.bucketstore.BucketStoreConfig;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Flag definitions of the store-gateway's {@link BucketStoreConfig}, with Mimir's
 * {@code blocks-storage.bucket-store.*} names; the bucket itself is
 * {@link dev.weir.ingester.config.BucketConfig}.
 */
public final class StoreGatewayConfig {
  private StoreGatewayConfig() {}

  /** Flag definitions. */
  public static final class Flags {
    private final Flag<Duration> syncInterval;
    private final Flag<String> syncDir;
    private final Flag<Long> maxChunkBytes;

    public Flags(FlagSet fs) {
      syncInterval = fs.duration("blocks-storage.bucket-store.sync-interval", BucketStoreConfig.DEFAULT_SYNC_INTERVAL,
          "How often the store-gateway lists the bucket to load new blocks and drop deleted ones. A query that"
              + " finds a block's files gone fails with UNAVAILABLE and brings the next sync forward.");
      syncDir = fs.string("blocks-storage.bucket-store.sync-dir", "./tsdb-sync", "Local directory where the"
          + " store-gateway caches each block's index header (TOC, symbols, postings offset table), so a restart"
          + " does not read them from the bucket again. A damaged file is rebuilt; the directory may be wiped.");
      maxChunkBytes = fs.int64("blocks-storage.bucket-store.max-chunk-bytes-per-query",
          BucketStoreConfig.DEFAULT_MAX_CHUNK_BYTES_PER_QUERY, "Chunk bytes one query may fetch from the bucket"
              + " (across its blocks); a query needing more fails with RESOURCE_EXHAUSTED before reading past it."
              + " 0 for no limit.");
    }

    public BucketStoreConfig build() throws ConfigException {
      try {
        return new BucketStoreConfig(syncInterval.get(), Path.of(syncDir.get()), maxChunkBytes.get());
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
    }
  }
}
