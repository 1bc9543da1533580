package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A bucket that records every read (block, file, offset, bytes returned) and every size call, can
 * hide blocks from listings, and can run a hook before a read (to change the bucket under a query).
 */
final class CountingBucket implements Bucket {
  record Read(String tenant, String id, String file, long offset, int bytes) {}

  final Bucket delegate;
  final List<Read> reads = new CopyOnWriteArrayList<>();
  final List<String> sizeCalls = new CopyOnWriteArrayList<>();
  final Set<String> hidden = new HashSet<>();
  volatile Consumer<Read> beforeRead = r -> {};
  /** When set, listings fail with it. */
  volatile @org.jspecify.annotations.Nullable IOException listFailure;

  CountingBucket(Bucket delegate) {
    this.delegate = delegate;
  }

  long bytesRead() {
    return reads.stream().mapToLong(Read::bytes).sum();
  }

  long bytesRead(String file) {
    return reads.stream().filter(r -> r.file().equals(file)).mapToLong(Read::bytes).sum();
  }

  long chunkBytesRead() {
    return reads.stream().filter(r -> r.file().startsWith("chunks/")).mapToLong(Read::bytes).sum();
  }

  void reset() {
    reads.clear();
    sizeCalls.clear();
  }

  @Override
  public void upload(String tenant, String id, Path localBlockDir) throws IOException {
    delegate.upload(tenant, id, localBlockDir);
  }

  @Override
  public List<BlockRef> list() throws IOException {
    IOException failure = listFailure;
    if (failure != null) {
      throw failure;
    }
    List<BlockRef> out = new ArrayList<>();
    for (BlockRef r : delegate.list()) {
      if (!hidden.contains(r.id())) {
        out.add(r);
      }
    }
    return out;
  }

  @Override
  public List<BlockRef> listIncomplete() throws IOException {
    return delegate.listIncomplete();
  }

  @Override
  public byte[] meta(String tenant, String id) throws IOException {
    return delegate.meta(tenant, id);
  }

  @Override
  public long size(String tenant, String id, String file) throws IOException {
    sizeCalls.add(id + "/" + file);
    return delegate.size(tenant, id, file);
  }

  @Override
  public byte[] read(String tenant, String id, String file, long offset, int length) throws IOException {
    beforeRead.accept(new Read(tenant, id, file, offset, length));
    byte[] b = delegate.read(tenant, id, file, offset, length);
    reads.add(new Read(tenant, id, file, offset, b.length));
    return b;
  }

  @Override
  public void delete(String tenant, String id) throws IOException {
    delegate.delete(tenant, id);
  }

  @Override
  public String describe() {
    return "counting:" + delegate.describe();
  }
}
