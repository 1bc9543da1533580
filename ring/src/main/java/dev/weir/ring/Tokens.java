package dev.weir.ring;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

/**
 * Ring tokens: unsigned 32-bit positions stored in Java ints. Owner lookup picks the first token
 * at or after a hash, wrapping around. Stateless.
 */
public final class Tokens {
  private Tokens() {}

  /** {@code n} random tokens not in {@code taken}, sorted (unsigned). */
  public static int[] random(int n, Set<Integer> taken, Random random) {
    Set<Integer> mine = new HashSet<>();
    while (mine.size() < n) {
      int t = random.nextInt();
      if (!taken.contains(t)) {
        mine.add(t);
      }
    }
    return sortUnsigned(mine.stream().mapToInt(Integer::intValue).toArray());
  }

  public static int[] sortUnsigned(int[] tokens) {
    long[] l = new long[tokens.length];
    for (int i = 0; i < tokens.length; i++) {
      l[i] = Integer.toUnsignedLong(tokens[i]);
    }
    Arrays.sort(l);
    int[] out = new int[l.length];
    for (int i = 0; i < l.length; i++) {
      out[i] = (int) l[i];
    }
    return out;
  }

  /**
   * Index in {@code sorted} (unsigned order) of the token owning {@code hash}: the first token
   * {@code >= hash}, or the first token when the hash is beyond the last one.
   */
  public static int ownerIndex(int[] sorted, int hash) {
    int lo = 0;
    int hi = sorted.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Integer.compareUnsigned(sorted[mid], hash) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == sorted.length ? 0 : lo;
  }

  /**
   * Fraction of the ring each token owns: from the previous token (exclusive) to itself
   * (inclusive), wrapping around. {@code sorted} must be in unsigned order.
   */
  public static double[] ownedFractions(int[] sorted) {
    double[] out = new double[sorted.length];
    if (sorted.length == 0) {
      return out;
    }
    for (int i = 0; i < sorted.length; i++) {
      long cur = Integer.toUnsignedLong(sorted[i]);
      long prev = Integer.toUnsignedLong(sorted[(i - 1 + sorted.length) % sorted.length]);
      long len = sorted.length == 1 ? (1L << 32) : Math.floorMod(cur - prev, 1L << 32);
      out[i] = len / (double) (1L << 32);
    }
    return out;
  }
}
