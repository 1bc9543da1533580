package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;

/**
 * One native histogram sample, Prometheus' {@code histogram.Histogram} (integer counts) and
 * {@code histogram.FloatHistogram} (float counts) in one immutable type.
 *
 * <p>Buckets are given as <em>absolute</em> counts (not the deltas of the wire and chunk formats),
 * in the order of their spans. A span list is interleaved {@code [offset0, length0, offset1,
 * length1, ...]}: the first offset is the index of the first bucket, later offsets are the gap to
 * the previous span's end (as in Prometheus' {@code BucketSpan}). For an integer histogram
 * ({@link #isFloat()} false) every count is a whole number below 2^53, so doubles hold them
 * exactly; the chunk and wire encoders turn them back into integers.
 *
 * <p>{@link #schema()} is -4..8 for exponential buckets and {@link #CUSTOM_BUCKETS_SCHEMA} for
 * custom bucket bounds ({@link #customValues()}, upper bounds of the positive buckets; empty
 * otherwise). Negative buckets are always empty for custom buckets.
 */
public final class NativeHistogram {
  /** Prometheus' schema number for custom (explicit) bucket boundaries. */
  public static final int CUSTOM_BUCKETS_SCHEMA = -53;

  public static final int RESET_UNKNOWN = 0;
  public static final int RESET_YES = 1;
  public static final int RESET_NO = 2;
  public static final int RESET_GAUGE = 3;

  private static final int[] NO_SPANS = new int[0];
  private static final double[] NO_VALUES = new double[0];

  private final boolean isFloat;
  private final int counterResetHint;
  private final int schema;
  private final double zeroThreshold;
  private final double zeroCount;
  private final double count;
  private final double sum;
  private final int[] positiveSpans;
  private final double[] positiveBuckets;
  private final int[] negativeSpans;
  private final double[] negativeBuckets;
  private final double[] customValues;

  /**
   * Arrays are taken as they are (not copied): callers hand over ownership and never change them.
   * Use {@link #checkLayout()} to check that spans and buckets agree.
   */
  public NativeHistogram(boolean isFloat, int counterResetHint, int schema, double zeroThreshold,
      double zeroCount, double count, double sum, int[] positiveSpans, double[] positiveBuckets,
      int[] negativeSpans, double[] negativeBuckets, double[] customValues) {
    this.isFloat = isFloat;
    this.counterResetHint = counterResetHint;
    this.schema = schema;
    this.zeroThreshold = zeroThreshold;
    this.zeroCount = zeroCount;
    this.count = count;
    this.sum = sum;
    this.positiveSpans = positiveSpans.length == 0 ? NO_SPANS : positiveSpans;
    this.positiveBuckets = positiveBuckets.length == 0 ? NO_VALUES : positiveBuckets;
    this.negativeSpans = negativeSpans.length == 0 ? NO_SPANS : negativeSpans;
    this.negativeBuckets = negativeBuckets.length == 0 ? NO_VALUES : negativeBuckets;
    this.customValues = customValues.length == 0 ? NO_VALUES : customValues;
  }

  /** Float counts ({@code FloatHistogram}); false for integer counts ({@code Histogram}). */
  public boolean isFloat() {
    return isFloat;
  }

  /** One of {@link #RESET_UNKNOWN}, {@link #RESET_YES}, {@link #RESET_NO}, {@link #RESET_GAUGE}. */
  public int counterResetHint() {
    return counterResetHint;
  }

  public int schema() {
    return schema;
  }

  public boolean customBuckets() {
    return schema == CUSTOM_BUCKETS_SCHEMA;
  }

  public double zeroThreshold() {
    return zeroThreshold;
  }

  public double zeroCount() {
    return zeroCount;
  }

  public double count() {
    return count;
  }

  public double sum() {
    return sum;
  }

  /** Interleaved offset/length pairs; do not modify. */
  public int[] positiveSpans() {
    return positiveSpans;
  }

  /** Absolute counts of the positive buckets, in span order; do not modify. */
  public double[] positiveBuckets() {
    return positiveBuckets;
  }

  /** Interleaved offset/length pairs; do not modify. */
  public int[] negativeSpans() {
    return negativeSpans;
  }

  /** Absolute counts of the negative buckets, in span order; do not modify. */
  public double[] negativeBuckets() {
    return negativeBuckets;
  }

  /** Upper bounds of custom buckets (schema -53); empty otherwise. Do not modify. */
  public double[] customValues() {
    return customValues;
  }

  /** Number of buckets, positive and negative (the zero bucket not included). */
  public int bucketCount() {
    return positiveBuckets.length + negativeBuckets.length;
  }

  /** Whether schema, zero threshold, spans and custom bounds equal the other's. */
  public boolean sameLayout(NativeHistogram o) {
    return schema == o.schema
        && Double.doubleToLongBits(zeroThreshold) == Double.doubleToLongBits(o.zeroThreshold)
        && Arrays.equals(positiveSpans, o.positiveSpans)
        && Arrays.equals(negativeSpans, o.negativeSpans)
        && Arrays.equals(customValues, o.customValues);
  }

  /**
   * Null when spans and buckets agree (lengths add up to the bucket counts, every offset after
   * the first span's is not negative, span arrays hold pairs); otherwise what is wrong.
   */
  public @org.jspecify.annotations.Nullable String checkLayout() {
    String p = checkSide("positive", positiveSpans, positiveBuckets.length);
    return p != null ? p : checkSide("negative", negativeSpans, negativeBuckets.length);
  }

  private static @org.jspecify.annotations.Nullable String checkSide(String side, int[] spans, int buckets) {
    if (spans.length % 2 != 0) {
      return side + " spans are not offset/length pairs";
    }
    long total = 0;
    for (int i = 0; i < spans.length; i += 2) {
      if (i > 0 && spans[i] < 0) {
        return side + " span " + (i / 2) + " has a negative offset " + spans[i];
      }
      if (spans[i + 1] < 0) {
        return side + " span " + (i / 2) + " has a negative length " + spans[i + 1];
      }
      total += spans[i + 1];
    }
    if (total != buckets) {
      return side + " spans need " + total + " buckets but there are " + buckets;
    }
    return null;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof NativeHistogram h)) {
      return false;
    }
    return isFloat == h.isFloat
        && counterResetHint == h.counterResetHint
        && sameLayout(h)
        && Double.doubleToLongBits(zeroCount) == Double.doubleToLongBits(h.zeroCount)
        && Double.doubleToLongBits(count) == Double.doubleToLongBits(h.count)
        && Double.doubleToLongBits(sum) == Double.doubleToLongBits(h.sum)
        && Arrays.equals(positiveBuckets, h.positiveBuckets)
        && Arrays.equals(negativeBuckets, h.negativeBuckets);
  }

  @Override
  public int hashCode() {
    int h = Boolean.hashCode(isFloat);
    h = 31 * h + schema;
    h = 31 * h + Double.hashCode(count);
    h = 31 * h + Double.hashCode(sum);
    h = 31 * h + Arrays.hashCode(positiveBuckets);
    return 31 * h + Arrays.hashCode(negativeBuckets);
  }

  @Override
  public String toString() {
    return (isFloat ? "FloatHistogram{" : "Histogram{") + "schema=" + schema + ", zt=" + zeroThreshold
        + ", zc=" + zeroCount + ", count=" + count + ", sum=" + sum + ", reset=" + counterResetHint
        + ", pos=" + Arrays.toString(positiveSpans) + Arrays.toString(positiveBuckets)
        + ", neg=" + Arrays.toString(negativeSpans) + Arrays.toString(negativeBuckets)
        + (customValues.length > 0 ? ", custom=" + Arrays.toString(customValues) : "") + "}";
  }
}
