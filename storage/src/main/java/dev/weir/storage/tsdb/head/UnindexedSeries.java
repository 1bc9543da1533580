package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.Arrays;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Series not in the postings yet (a replay's, then those created while its index is built), each
 * with its labels when the caller had them, else indexed from its label bytes. Two arrays, not an
 * object per series: a replay of a million series kept a million 24-byte records alive through
 * every young collection of the replay. The labels' array exists only once one series has labels
 * (a replay from encoded records has none). Not thread-safe: the head's creation lock guards it.
 */
final class UnindexedSeries {
  private MemSeries[] series = new MemSeries[64];
  private @Nullable Labels @Nullable [] labels;
  private int size;

  void add(MemSeries s, @Nullable Labels l) {
    if (size == series.length) {
      series = Arrays.copyOf(series, size * 2);
      if (labels != null) {
        labels = Arrays.copyOf(labels, size * 2);
      }
    }
    if (l != null && labels == null) {
      labels = new Labels[series.length];
    }
    series[size] = s;
    if (labels != null) {
      labels[size] = l;
    }
    size++;
  }

  int size() {
    return size;
  }

  MemSeries series(int i) {
    return series[i];
  }

  /** Adds series {@code i} to {@code postings}: by its labels, or by its bytes when it has none here. */
  void index(int i, PostingsIndex postings) {
    Labels l = labels == null ? null : labels[i];
    if (l != null) {
      postings.add(series[i], l);
    } else {
      postings.addEncoded(series[i]);
    }
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
    Labels[] l = labels == null ? null : new Labels[s.length];
    int n = 0;
    for (long o : order) {
      int i = (int) o;
      if (keep.test(series[i])) {
        s[n] = series[i];
        if (l != null) {
          l[n] = labels[i];
        }
        n++;
      }
    }
    series = s;
    labels = l;
    size = n;
  }
}
