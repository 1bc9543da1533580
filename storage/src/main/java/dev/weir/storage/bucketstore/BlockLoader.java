package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads a block for the {@link BucketStore}: its meta.json, then its index header from the local
 * cache or, when the cache has none or a bad one, from the bucket (the size of the index, its TOC,
 * then the symbol table and the postings offset table: four requests), which it then caches.
 *
 * <p>Thread-safe for different blocks.
 */
final class BlockLoader {
  private static final Logger log = LoggerFactory.getLogger(BlockLoader.class);

  private final Bucket bucket;
  private final IndexHeaderCache cache;
  private final BucketStoreMetrics metrics;

  BlockLoader(Bucket bucket, IndexHeaderCache cache, BucketStoreMetrics metrics) {
    this.bucket = bucket;
    this.cache = cache;
    this.metrics = metrics;
  }

  static long checksum(byte[] metaJson) {
    CRC32C crc = new CRC32C();
    crc.update(metaJson);
    return crc.getValue();
  }

  /** Whether the block carries a {@link DeletionMark}: then it is not loaded (or dropped). */
  boolean markedForDeletion(String tenant, String id) throws IOException {
    return DeletionMark.exists(bucket, tenant, id);
  }

  /**
   * Loads the block, or keeps {@code loaded} when its meta.json did not change.
   *
   * @throws java.nio.file.NoSuchFileException when the block left the bucket meanwhile
   */
  BucketBlock load(String tenant, String id, @Nullable BucketBlock loaded) throws IOException {
    byte[] json = bucket.meta(tenant, id);
    long metaChecksum = checksum(json);
    if (loaded != null && loaded.metaChecksum() == metaChecksum) {
      return loaded;
    }
    BlockMeta meta = BlockMeta.parse(new String(json, StandardCharsets.UTF_8), tenant + "/" + id);
    if (!meta.ulid().equals(id)) {
      throw new IOException("meta.json of block " + tenant + "/" + id + " names block " + meta.ulid());
    }
    return new BucketBlock(tenant, meta, header(tenant, id, metaChecksum), bucket, metaChecksum);
  }

  private IndexHeader header(String tenant, String id, long metaChecksum) throws IOException {
    IndexHeaderCache.Lookup found = cache.load(tenant, id, metaChecksum);
    IndexHeader.Raw cached = found.raw();
    String outcome = found.outcome();
    if (cached != null) {
      try {
        IndexHeader h = IndexHeader.parse(cached);
        metrics.indexHeader(outcome);
        return h;
      } catch (IOException e) {
        outcome = IndexHeaderCache.Lookup.CORRUPT;
      }
    }
    metrics.indexHeader(outcome);
    if (outcome.equals(IndexHeaderCache.Lookup.CORRUPT)) {
      log.warn("msg=\"index-header cache file is corrupt, rebuilding it from the bucket\" tenant={} block={} file={}",
          tenant, id, cache.file(tenant, id));
    }
    IndexHeader h = IndexHeader.parse(fetch(tenant, id));
    try {
      cache.store(tenant, id, metaChecksum, h.raw());
    } catch (IOException e) {
      log.warn("msg=\"cannot cache the index header; the next restart reads it again\" tenant={} block={} err=\"{}\"",
          tenant, id, e.toString());
    }
    return h;
  }

  private IndexHeader.Raw fetch(String tenant, String id) throws IOException {
    long size = bucket.size(tenant, id, "index");
    if (size < 5 + IndexToc.BYTES) {
      throw new IOException("index of " + tenant + "/" + id + " is too short: " + size + " bytes");
    }
    byte[] tocBytes = bucket.read(tenant, id, "index", size - IndexToc.BYTES, IndexToc.BYTES);
    IndexToc toc = IndexToc.parse(tocBytes, size);
    byte[] symbols = bucket.read(tenant, id, "index", toc.symbols(), Math.toIntExact(toc.series() - toc.symbols()));
    byte[] table = bucket.read(tenant, id, "index", toc.postingsTable(),
        Math.toIntExact(toc.end() - toc.postingsTable()));
    return new IndexHeader.Raw(size, tocBytes, IndexHeader.trimSection(symbols, "symbol table"),
        IndexHeader.trimSection(table, "postings offset table"));
  }
}
