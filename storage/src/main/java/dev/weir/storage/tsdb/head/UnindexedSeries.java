package dev.weir.storage.tsdb.head;

import java.util.Arrays;
import java.util.function.Predicate;

/**
 * Series not in the postings yet (a replay's, then those created while its index is built); the
 * postings are built from each series' own label bytes. One array, not an object per series: a
 * replay of a million series kept a million 24-byte records alive through every young collection
 * of the replay. Not thread-safe: the head's creation lock guards it.
 */
final class UnindexedSeries {
  private MemSeries[] series = new MemSeries[64];
  private int size;

  void add(MemSeries s) {
    if (size == series.length) {
      series = Arrays.copyOf(series, size * 2);
    }
    series[size++] = s;
  }

  int size() {
    return size;
  }

  MemSeries series(int i) {
    return series[i];
  }

  /** Gives series {@code i} its value numbers ({@link MemSeries#numberValues}) and adds it to {@code postings}. */
  void index(int i, PostingsIndex postings) {
    MemSeries s = series[i];
    try {
      s.numberValues();
    } catch (RuntimeException e) {
      // Numbers only save memory: a series whose values could not get them keeps them in full
      // rather than failing the index (and with it the tenant's queries).
      org.slf4j.LoggerFactory.getLogger(UnindexedSeries.class).warn(
          "msg=\"label values of a replayed series kept in full\" ref={} err=\"{}\"", s.ref(), e.toString());
    }
    postings.add(s);
  }

  /** Orders the series by ref (as the postings need them) and keeps those {@code keep} accepts. */
  void sortByRefAndKeep(Predicate<MemSeries> keep) {
    long[] order = new long[size];
    boolean sorted = true;
    for (int i = 0; i < size; i++) {
      order[i] = (long) series[i].ref() << 32 | i;
      sorted &= i == 0 || order[i] > order[i - 1];
    }
    if (!sorted) {
      Arrays.sort(order);
    }
    MemSeries[] s = new MemSeries[Math.max(size, 1)];
    int n = 0;
    for (long o : order) {
      int i = (int) o;
      if (keep.test(series[i])) {
        s[n++] = series[i];
      }
    }
    series = s;
    size = n;
  }
}
