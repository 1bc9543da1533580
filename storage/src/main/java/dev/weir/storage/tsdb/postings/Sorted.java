package dev.weir.storage.tsdb.postings;

import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

/** Set operations on sorted, duplicate-free int arrays. Stateless. */
public final class Sorted {
  public static final int[] EMPTY = new int[0];

  private Sorted() {}

  public static int[] intersect(int[] a, int[] b) {
    int[] out = new int[Math.min(a.length, b.length)];
    int i = 0;
    int j = 0;
    int n = 0;
    while (i < a.length && j < b.length) {
      if (a[i] < b[j]) {
        i++;
      } else if (a[i] > b[j]) {
        j++;
      } else {
        out[n++] = a[i];
        i++;
        j++;
      }
    }
    return Arrays.copyOf(out, n);
  }

  public static int[] subtract(int[] a, int[] b) {
    if (b.length == 0) {
      return a;
    }
    int[] out = new int[a.length];
    int j = 0;
    int n = 0;
    for (int x : a) {
      while (j < b.length && b[j] < x) {
        j++;
      }
      if (j >= b.length || b[j] != x) {
        out[n++] = x;
      }
    }
    return Arrays.copyOf(out, n);
  }

  public static int[] union(List<int[]> lists) {
    if (lists.isEmpty()) {
      return EMPTY;
    }
    if (lists.size() == 1) {
      return lists.get(0);
    }
    int total = 0;
    for (int[] l : lists) {
      total += l.length;
    }
    if (lists.size() > 16) {
      // Many small lists (regex over a high-cardinality label): concatenate and sort.
      int[] all = new int[total];
      int p = 0;
      for (int[] l : lists) {
        System.arraycopy(l, 0, all, p, l.length);
        p += l.length;
      }
      Arrays.sort(all);
      return dedup(all);
    }
    PriorityQueue<int[]> heap = new PriorityQueue<>((x, y) -> Integer.compare(x[0], y[0]));
    for (int k = 0; k < lists.size(); k++) {
      if (lists.get(k).length > 0) {
        heap.add(new int[] {lists.get(k)[0], k, 0});
      }
    }
    int[] out = new int[total];
    int n = 0;
    while (!heap.isEmpty()) {
      int[] top = heap.poll();
      if (n == 0 || out[n - 1] != top[0]) {
        out[n++] = top[0];
      }
      int[] src = lists.get(top[1]);
      int next = top[2] + 1;
      if (next < src.length) {
        heap.add(new int[] {src[next], top[1], next});
      }
    }
    return Arrays.copyOf(out, n);
  }

  private static int[] dedup(int[] sorted) {
    int n = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (n == 0 || sorted[n - 1] != sorted[i]) {
        sorted[n++] = sorted[i];
      }
    }
    return Arrays.copyOf(sorted, n);
  }
}
