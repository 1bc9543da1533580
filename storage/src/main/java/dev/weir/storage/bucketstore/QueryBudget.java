package dev.weir.storage.bucketstore;

import dev.weir.storage.errors.ClientErrorException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The chunk bytes one query may fetch from the bucket, across all its blocks. A read is reserved
 * before it is made, so a query over the limit fails before the bytes are in memory.
 *
 * <p>Thread-safe.
 */
final class QueryBudget {
  /** For index reads, which the index header and postings sizes bound already. */
  static final QueryBudget UNLIMITED = new QueryBudget(0);

  private final long maxBytes;
  private final AtomicLong used = new AtomicLong();

  /** @param maxBytes the limit; 0 for none */
  QueryBudget(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /**
   * Counts {@code bytes} against the limit.
   *
   * @throws ClientErrorException (HTTP 429, gRPC RESOURCE_EXHAUSTED) when they pass it
   */
  void reserve(long bytes) {
    if (this == UNLIMITED) {
      return;
    }
    long total = used.addAndGet(bytes);
    if (maxBytes > 0 && total > maxBytes) {
      throw new ClientErrorException("max_chunk_bytes_per_query", "the query needs more than " + maxBytes
          + " bytes of chunks from the bucket (blocks-storage.bucket-store.max-chunk-bytes-per-query):"
          + " narrow its matchers or time range", 429);
    }
  }

  /** Gives back bytes reserved but not read (a read cut short by the end of its file). */
  void release(long bytes) {
    if (this != UNLIMITED) {
      used.addAndGet(-bytes);
    }
  }

  long used() {
    return used.get();
  }
}
