package dev.weir.storage.tsdb.head;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Maps series refs (dense positive ints) to series, in pages so growth never copies the series.
 *
 * <p>Single writer (the head's creation lock), lock-free readers. A reader obtains refs from the
 * postings index, whose volatile size is published after {@link #put}, so the entry is visible.
 */
final class SeriesRefs {
  private static final int PAGE_BITS = 12;
  private static final int PAGE_SIZE = 1 << PAGE_BITS;

  private volatile MemSeries[][] pages = new MemSeries[4][];

  void put(int ref, @Nullable MemSeries s) {
    int page = ref >>> PAGE_BITS;
    MemSeries[][] p = pages;
    if (page >= p.length) {
      p = Arrays.copyOf(p, Math.max(page + 1, p.length * 2));
    }
    if (p[page] == null) {
      p[page] = new MemSeries[PAGE_SIZE];
    }
    p[page][ref & (PAGE_SIZE - 1)] = s;
    pages = p;
  }

  @Nullable MemSeries get(int ref) {
    MemSeries[][] p = pages;
    int page = ref >>> PAGE_BITS;
    if (page >= p.length || p[page] == null) {
      return null;
    }
    return p[page][ref & (PAGE_SIZE - 1)];
  }
}
