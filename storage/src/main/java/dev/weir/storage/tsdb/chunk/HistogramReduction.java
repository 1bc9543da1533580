package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;

/**
 * Lowers the resolution of an exponential native histogram, as Prometheus'
 * {@code Histogram.ReduceResolution} does: every bucket of schema {@code s} maps to bucket
 * {@code ((i - 1) >> (s - t)) + 1} of the target schema {@code t}, whose count is the sum of the
 * buckets mapped to it. Count, sum, zero bucket and reset hint are unchanged; an integer
 * histogram stays an integer histogram. Stateless.
 */
public final class HistogramReduction {
  /** The lowest exponential schema: buckets grow by a factor of 2^16 each. */
  public static final int MIN_SCHEMA = -4;
  /** The highest exponential schema Prometheus stores. */
  public static final int MAX_SCHEMA = 8;

  private HistogramReduction() {}

  /**
   * The histogram at {@code targetSchema}, or {@code h} itself when it already has that schema or
   * a lower one.
   *
   * @throws IllegalArgumentException for a custom-buckets histogram, or a target below
   *     {@link #MIN_SCHEMA}
   */
  public static NativeHistogram toSchema(NativeHistogram h, int targetSchema) {
    if (h.customBuckets()) {
      throw new IllegalArgumentException("a custom-buckets histogram has no lower resolution");
    }
    if (targetSchema < MIN_SCHEMA) {
      throw new IllegalArgumentException("schema " + targetSchema + " is below " + MIN_SCHEMA);
    }
    if (targetSchema >= h.schema()) {
      return h;
    }
    int shift = h.schema() - targetSchema;
    Side pos = merge(h.positiveSpans(), h.positiveBuckets(), shift);
    Side neg = merge(h.negativeSpans(), h.negativeBuckets(), shift);
    return new NativeHistogram(h.isFloat(), h.counterResetHint(), targetSchema, h.zeroThreshold(), h.zeroCount(),
        h.count(), h.sum(), pos.spans, pos.buckets, neg.spans, neg.buckets, new double[0]);
  }

  /**
   * The histogram with at most {@code maxBuckets} buckets (positive plus negative), lowering the
   * schema one step at a time as Mimir does; null when even {@link #MIN_SCHEMA} has more, or the
   * histogram uses custom buckets (which cannot be merged).
   */
  public static @org.jspecify.annotations.Nullable NativeHistogram withinBuckets(NativeHistogram h, int maxBuckets) {
    NativeHistogram cur = h;
    while (cur.bucketCount() > maxBuckets) {
      if (cur.customBuckets() || cur.schema() <= MIN_SCHEMA) {
        return null;
      }
      cur = toSchema(cur, cur.schema() - 1);
    }
    return cur;
  }

  private record Side(int[] spans, double[] buckets) {}

  private static Side merge(int[] spans, double[] buckets, int shift) {
    if (buckets.length == 0) {
      return new Side(new int[0], new double[0]);
    }
    int[] outSpans = new int[spans.length];
    double[] out = new double[buckets.length];
    int nSpans = 0;
    int nOut = 0;
    long lastTarget = 0;
    boolean any = false;
    long idx = 0;
    int b = 0;
    for (int s = 0; s < spans.length; s += 2) {
      idx += spans[s];
      for (int k = 0; k < spans[s + 1]; k++, idx++, b++) {
        long target = ((idx - 1) >> shift) + 1;
        if (any && target == lastTarget) {
          out[nOut - 1] += buckets[b];
          continue;
        }
        if (any && target == lastTarget + 1) {
          outSpans[nSpans - 1]++;
        } else {
          outSpans[nSpans] = (int) (any ? target - lastTarget - 1 : target);
          outSpans[nSpans + 1] = 1;
          nSpans += 2;
        }
        out[nOut++] = buckets[b];
        lastTarget = target;
        any = true;
      }
    }
    return new Side(Arrays.copyOf(outSpans, nSpans), Arrays.copyOf(out, nOut));
  }
}
