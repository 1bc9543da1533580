package dev.weir.ring.partition;

import dev.weir.ring.Tokens;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Tokens for a new partition, chosen so that after adding it every partition owns as close to
 * 1/n of the ring as the token count allows. Each existing partition gives up exactly its
 * surplus over the new fair share: the new partition's tokens are allotted to partitions in
 * proportion to their surplus and carve that surplus out of their largest ranges. The first
 * partition gets evenly spaced tokens. Concurrent creators are serialized by the ring's CAS, so
 * the result need not be deterministic. Stateless.
 */
public final class PartitionTokens {
  static final long SPACE = 1L << 32;

  private PartitionTokens() {}

  /** Tokens (sorted, unsigned) for a partition joining {@code existing} (partition → tokens). */
  public static int[] forNewPartition(Map<Integer, int[]> existing, int numTokens) {
    if (existing.isEmpty() || existing.values().stream().allMatch(t -> t.length == 0)) {
      int[] out = new int[numTokens];
      for (int j = 0; j < numTokens; j++) {
        out[j] = (int) ((j + 1) * SPACE / numTokens - 1);
      }
      return Tokens.sortUnsigned(out);
    }
    // All tokens in ring order with their owners; a token owns (previous token, itself].
    List<long[]> ring = new ArrayList<>();
    Set<Long> taken = new HashSet<>();
    for (Map.Entry<Integer, int[]> e : existing.entrySet()) {
      for (int t : e.getValue()) {
        long u = Integer.toUnsignedLong(t);
        ring.add(new long[] {u, e.getKey()});
        taken.add(u);
      }
    }
    ring.sort(Comparator.comparingLong(a -> a[0]));
    Map<Integer, Long> owned = new HashMap<>();
    Map<Integer, List<long[]>> ranges = new HashMap<>(); // partition → {start (exclusive), length}
    for (int i = 0; i < ring.size(); i++) {
      long cur = ring.get(i)[0];
      long prev = ring.get((i - 1 + ring.size()) % ring.size())[0];
      long len = ring.size() == 1 ? SPACE : Math.floorMod(cur - prev, SPACE);
      int p = (int) ring.get(i)[1];
      owned.merge(p, len, Long::sum);
      ranges.computeIfAbsent(p, k -> new ArrayList<>()).add(new long[] {prev, len});
    }
    long fair = SPACE / (existing.size() + 1);
    Map<Integer, Long> surplus = new HashMap<>();
    long totalSurplus = 0;
    for (Map.Entry<Integer, Long> e : owned.entrySet()) {
      long s = Math.max(0, e.getValue() - fair);
      if (s > 0) {
        surplus.put(e.getKey(), s);
        totalSurplus += s;
      }
    }
    // Largest-remainder allotment of the new tokens in proportion to surplus.
    Map<Integer, Integer> allot = new HashMap<>();
    List<double[]> remainders = new ArrayList<>();
    int given = 0;
    for (Map.Entry<Integer, Long> e : surplus.entrySet()) {
      double exact = numTokens * (double) e.getValue() / totalSurplus;
      int k = (int) Math.floor(exact);
      allot.put(e.getKey(), k);
      given += k;
      remainders.add(new double[] {exact - k, e.getKey()});
    }
    remainders.sort((a, b) -> Double.compare(b[0], a[0]));
    for (int i = 0; given < numTokens && i < remainders.size(); i++, given++) {
      allot.merge((int) remainders.get(i)[1], 1, Integer::sum);
    }
    List<Long> out = new ArrayList<>();
    for (Map.Entry<Integer, Integer> e : allot.entrySet()) {
      int k = e.getValue();
      if (k == 0) {
        continue;
      }
      List<long[]> mine = ranges.get(e.getKey());
      mine.sort((a, b) -> Long.compare(b[1], a[1]));
      long left = surplus.get(e.getKey());
      for (int i = 0; i < k && i < mine.size(); i++) {
        long want = left / (k - i);
        long[] r = mine.get(i);
        long take = Math.max(1, Math.min(want, r[1] - 1));
        long token = (r[0] + take) % SPACE;
        while (taken.contains(token)) {
          token = (token + 1) % SPACE;
        }
        taken.add(token);
        out.add(token);
        left -= take;
      }
    }
    int[] tokens = new int[out.size()];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = (int) (long) out.get(i);
    }
    return Tokens.sortUnsigned(tokens);
  }
}
