package dev.weir.storage.tsdb.labels;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Deduplicates label strings so that the many series sharing a name or value share one String.
 * Only strings of series that are actually created are interned, so the table grows with the
 * number of distinct strings in the head, not with the request rate.
 *
 * <p><b>Bound.</b> Entries are reference-counted: every {@link #intern} is paired with a
 * {@link #release} when its holder (a head series) goes away — removed by head truncation or
 * dropped at the end of a replay. A string stays exactly as long as some live series uses it, so
 * the table is bounded by the distinct strings of the live series of all heads; series churn
 * (e.g. a pod label changing on every deploy) no longer leaks heap.
 *
 * <p>Thread-safe. Interning and releasing happen on series creation and removal only, not per
 * sample.
 */
public final class Interner {
  /**
   * Heap cost of one interned string beyond its characters: String object (24), byte[] header
   * (16), map node (32), entry (24) and table slot (8, amortized).
   */
  static final int PER_STRING_BYTES = 24 + 16 + 32 + 24 + 8;

  /** An interned string and how many holders use it; guarded by the map's per-key locking. */
  private static final class Entry {
    final String value;
    int refs;

    Entry(String value) {
      this.value = value;
    }
  }

  private final ConcurrentHashMap<String, Entry> table = new ConcurrentHashMap<>();
  private final AtomicLong bytes = new AtomicLong();

  /** The shared copy of {@code s}, counting one more holder; pair with {@link #release(String)}. */
  public String intern(String s) {
    return table.compute(s, (k, e) -> {
      if (e == null) {
        e = new Entry(k);
        bytes.addAndGet(PER_STRING_BYTES + k.length());
      }
      e.refs++;
      return e;
    }).value;
  }

  /** One holder of {@code s} is gone; the entry goes when the last one is. */
  public void release(String s) {
    table.computeIfPresent(s, (k, e) -> {
      if (--e.refs > 0) {
        return e;
      }
      bytes.addAndGet(-(PER_STRING_BYTES + k.length()));
      return null;
    });
  }

  /** Estimated heap bytes of the interned strings and the table. */
  public long bytesEstimate() {
    return bytes.get();
  }

  /**
   * Returns labels whose strings are all interned (a new object; the input is not changed); pair
   * with {@link #release(Labels)}.
   */
  public Labels intern(Labels labels) {
    String[] src = labels.pairsUnsafe();
    String[] dst = new String[src.length];
    for (int i = 0; i < src.length; i++) {
      dst[i] = intern(src[i]);
    }
    return Labels.ofSortedPairs(dst);
  }

  /** Releases every string of labels returned by {@link #intern(Labels)}. */
  public void release(Labels labels) {
    for (String s : labels.pairsUnsafe()) {
      release(s);
    }
  }

  /** Distinct strings held. */
  public int size() {
    return table.size();
  }

  public void clear() {
    table.clear();
    bytes.set(0);
  }
}
