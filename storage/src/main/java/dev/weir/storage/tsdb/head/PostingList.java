package dev.weir.storage.tsdb.head;

import java.util.Arrays;

/**
 * A growing sorted list of series refs for one label pair.
 *
 * <p>Single writer, many readers: {@link #add} is called only under the index's write lock and
 * with increasing refs; readers call {@link #snapshot()} without a lock. The element is stored
 * before the volatile size is published, and a grown array holds every element of the old one, so
 * a reader that sees size {@code n} also sees the first {@code n} elements.
 */
final class PostingList {
  private int[] refs = new int[2];
  private volatile int size;

  void add(int ref) {
    int n = size;
    int[] a = refs;
    if (n == a.length) {
      a = Arrays.copyOf(a, n < 64 ? n * 2 : n + (n >> 1));
      refs = a;
    }
    a[n] = ref;
    size = n + 1;
  }

  int size() {
    return size;
  }

  /** The refs published so far, in increasing order (a copy the caller may keep). */
  int[] snapshot() {
    int n = size;
    int[] copy = Arrays.copyOf(refs, n);
    // A reader racing with retain() may see the shorter array with the older size; the padding
    // is 0, which is never a valid ref, and only ever at the tail: trim it to stay sorted.
    while (n > 0 && copy[n - 1] == 0) {
      n--;
    }
    return n == copy.length ? copy : Arrays.copyOf(copy, n);
  }

  /** Replaces the content (used when series are removed); caller holds the write lock. */
  void retain(java.util.function.IntPredicate keep) {
    int n = size;
    int[] a = refs;
    int[] out = new int[Math.max(2, n)];  // as long as the old size: see snapshot()
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (keep.test(a[i])) {
        out[m++] = a[i];
      }
    }
    refs = out;
    size = m;
  }
}
