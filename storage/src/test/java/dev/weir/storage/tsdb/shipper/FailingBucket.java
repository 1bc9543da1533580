package dev.weir.storage.tsdb.shipper;

import dev.weir.storage.bucket.Bucket;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real bucket that fails on demand: every call ({@link #down}), or the uploads of some block
 * IDs ({@link #failIds}); uploads can also hang until released ({@link #hang}). Counts the uploads
 * that reached the real bucket. Thread-safe.
 */
final class FailingBucket implements Bucket {
  final Bucket real;
  final AtomicBoolean down = new AtomicBoolean();
  final Set<String> failIds = ConcurrentHashMap.newKeySet();
  final AtomicInteger uploads = new AtomicInteger();
  final AtomicReference<CountDownLatch> hang = new AtomicReference<>();
  /** Counted down when an upload starts waiting on {@link #hang}. */
  final CountDownLatch hanging = new CountDownLatch(1);

  FailingBucket(Bucket real) {
    this.real = real;
  }

  private void check(String what) throws IOException {
    if (down.get()) {
      throw new IOException("bucket unreachable (" + what + ")");
    }
  }

  @Override
  public void upload(String tenant, String id, Path localBlockDir) throws IOException {
    CountDownLatch h = hang.get();
    if (h != null) {
      hanging.countDown();
      try {
        h.await();
      } catch (InterruptedException e) {
        throw new IOException("interrupted", e);
      }
    }
    check("upload");
    if (failIds.contains(id)) {
      throw new IOException("upload of " + id + " refused");
    }
    real.upload(tenant, id, localBlockDir);
    uploads.incrementAndGet();
  }

  @Override
  public List<BlockRef> list() throws IOException {
    check("list");
    return real.list();
  }

  @Override
  public List<BlockRef> listIncomplete() throws IOException {
    check("listIncomplete");
    return real.listIncomplete();
  }

  @Override
  public byte[] meta(String tenant, String id) throws IOException {
    check("meta");
    return real.meta(tenant, id);
  }

  @Override
  public long size(String tenant, String id, String file) throws IOException {
    check("size");
    return real.size(tenant, id, file);
  }

  @Override
  public byte[] read(String tenant, String id, String file, long offset, int length) throws IOException {
    check("read");
    return real.read(tenant, id, file, offset, length);
  }

  @Override
  public void delete(String tenant, String id) throws IOException {
    check("delete");
    real.delete(tenant, id);
  }

  @Override
  public String describe() {
    return "failing:" + real.describe();
  }
}
