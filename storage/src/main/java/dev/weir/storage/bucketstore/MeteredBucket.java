package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** A bucket whose reads count in {@link BucketStoreMetrics}. Thread-safe as the bucket it wraps. */
final class MeteredBucket implements Bucket {
  private final Bucket bucket;
  private final BucketStoreMetrics metrics;

  MeteredBucket(Bucket bucket, BucketStoreMetrics metrics) {
    this.bucket = bucket;
    this.metrics = metrics;
  }

  @Override
  public void upload(String tenant, String id, Path localBlockDir) throws IOException {
    bucket.upload(tenant, id, localBlockDir);
  }

  @Override
  public List<BlockRef> list() throws IOException {
    return bucket.list();
  }

  @Override
  public List<BlockRef> listIncomplete() throws IOException {
    return bucket.listIncomplete();
  }

  @Override
  public byte[] meta(String tenant, String id) throws IOException {
    byte[] b = bucket.meta(tenant, id);
    metrics.bucketRead(BlockMeta.FILE, b.length);
    return b;
  }

  @Override
  public long size(String tenant, String id, String file) throws IOException {
    return bucket.size(tenant, id, file);
  }

  @Override
  public byte[] read(String tenant, String id, String file, long offset, int length) throws IOException {
    byte[] b = bucket.read(tenant, id, file, offset, length);
    metrics.bucketRead(file, b.length);
    return b;
  }

  @Override
  public void delete(String tenant, String id) throws IOException {
    bucket.delete(tenant, id);
  }

  @Override
  public void putFile(String tenant, String id, String file, byte[] content) throws IOException {
    bucket.putFile(tenant, id, file, content);
  }

  @Override
  public String describe() {
    return bucket.describe();
  }
}
