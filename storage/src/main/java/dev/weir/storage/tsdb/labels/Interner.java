package dev.weir.storage.tsdb.labels;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Deduplicates label strings so that the many series sharing a name or value share one String.
 * Only strings of series that are actually created are interned, so the table grows with the
 * number of distinct strings in the head, not with the request rate.
 *
 * <p>Thread-safe. Entries are never removed; {@link #clear()} is for tests.
 */
public final class Interner {
  /**
   * Heap cost of one interned string beyond its characters: String object (24), byte[] header
   * (16), map node (32) and table slot (8, amortized).
   */
  static final int PER_STRING_BYTES = 24 + 16 + 32 + 8;

  private final ConcurrentHashMap<String, String> table = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();

  public String intern(String s) {
    String existing = table.putIfAbsent(s, s);
    if (existing == null) {
      bytes.addAndGet(PER_STRING_BYTES + s.length());
      return s;
    }
    return existing;
  }

  /** Estimated heap bytes of the interned strings and the table. */
  public long bytesEstimate() {
    return bytes.get();
  }

  /** Returns labels whose strings are all interned (a new object; the input is not changed). */
  public Labels intern(Labels labels) {
    String[] src = labels.pairsUnsafe();
    String[] dst = new String[src.length];
    for (int i = 0; i < src.length; i++) {
      dst[i] = intern(src[i]);
    }
    return Labels.ofSortedPairs(dst);
  }

  public int size() {
    return table.size();
  }

  public void clear() {
    table.clear();
    bytes.set(0);
  }
}
