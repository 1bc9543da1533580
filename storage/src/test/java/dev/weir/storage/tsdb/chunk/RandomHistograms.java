package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;
import java.util.Random;

/**
 * Random native histograms for round-trip tests: every schema, zero thresholds that take the
 * one-byte and the 9-byte form, empty and zero-length spans, zero offsets, negative buckets, custom
 * bounds in both encodings, NaN and infinite sums. {@link #next} grows the counts of the previous
 * sample (a counter) or moves them both ways (a gauge).
 */
final class RandomHistograms {
  static final double STALE_NAN = Double.longBitsToDouble(Chunks.STALE_NAN_BITS);
  private static final double[] THRESHOLDS = {0, 0x1p-128, 0x1p-243, 0x1p10, 0x1p11, 0.001, 1e-300, 3};
  private static final double[] BOUNDS = {0.005, 0.1, 0.25, 1, 2.5, 33554.43, 33554.431, 1e6, 1.0001e-4,
      Math.PI, 7, 12.345};

  private final Random r;
  private final boolean isFloat;

  RandomHistograms(Random r, boolean isFloat) {
    this.r = r;
    this.isFloat = isFloat;
  }

  /** A first sample with a new random layout. */
  NativeHistogram first(int hint) {
    boolean custom = r.nextInt(6) == 0;
    int schema = custom ? NativeHistogram.CUSTOM_BUCKETS_SCHEMA : r.nextInt(13) - 4;
    double zt = custom ? 0 : THRESHOLDS[r.nextInt(THRESHOLDS.length)];
    int[] pos = spans(custom);
    int[] neg = custom ? new int[0] : spans(false);
    double[] bounds = custom ? bounds(pos) : new double[0];
    double[] pb = counts(bucketsOf(pos));
    double[] nb = counts(bucketsOf(neg));
    double zc = custom ? 0 : count();
    return build(hint, schema, zt, zc, sum(), pos, pb, neg, nb, bounds);
  }

  /** The next sample of the same layout: counts grow (counter) or move both ways (gauge). */
  NativeHistogram next(NativeHistogram prev, int hint) {
    boolean gauge = hint == NativeHistogram.RESET_GAUGE;
    double[] pb = step(prev.positiveBuckets(), gauge);
    double[] nb = step(prev.negativeBuckets(), gauge);
    double zc = prev.customBuckets() ? 0 : step(new double[] {prev.zeroCount()}, gauge)[0];
    return build(hint, prev.schema(), prev.zeroThreshold(), zc, sum(), prev.positiveSpans(), pb,
        prev.negativeSpans(), nb, prev.customValues());
  }

  /** {@code prev} with one count lowered (a counter reset), or the count lowered if it has none. */
  NativeHistogram reset(NativeHistogram prev) {
    double[] pb = prev.positiveBuckets().clone();
    double zc = prev.zeroCount();
    if (pb.length > 0 && pb[pb.length - 1] > 0) {
      pb[pb.length - 1] -= 1;
    } else if (zc > 0) {
      zc -= 1;
    } else {
      return build(NativeHistogram.RESET_UNKNOWN, prev.schema(), prev.zeroThreshold(), zc,
          prev.sum(), prev.positiveSpans(), pb, prev.negativeSpans(), prev.negativeBuckets(),
          prev.customValues(), prev.count() - 1);
    }
    return build(NativeHistogram.RESET_UNKNOWN, prev.schema(), prev.zeroThreshold(), zc, prev.sum(),
        prev.positiveSpans(), pb, prev.negativeSpans(), prev.negativeBuckets(), prev.customValues());
  }

  NativeHistogram stale() {
    return new NativeHistogram(isFloat, NativeHistogram.RESET_UNKNOWN, 0, 0, 0, 0, STALE_NAN,
        new int[0], new double[0], new int[0], new double[0], new double[0]);
  }

  private NativeHistogram build(int hint, int schema, double zt, double zc, double sum, int[] pos,
      double[] pb, int[] neg, double[] nb, double[] bounds) {
    double count = zc;
    for (double b : pb) {
      count += b;
    }
    for (double b : nb) {
      count += b;
    }
    return build(hint, schema, zt, zc, sum, pos, pb, neg, nb, bounds, count);
  }

  private NativeHistogram build(int hint, int schema, double zt, double zc, double sum, int[] pos,
      double[] pb, int[] neg, double[] nb, double[] bounds, double count) {
    return new NativeHistogram(isFloat, hint, schema, zt, zc, count, sum, pos, pb, neg, nb, bounds);
  }

  private int[] spans(boolean custom) {
    int n = r.nextInt(5);
    int[] out = new int[2 * n];
    for (int i = 0; i < n; i++) {
      out[2 * i] = i == 0 ? (custom ? r.nextInt(3) : r.nextInt(200) - 100) : r.nextInt(4);
      out[2 * i + 1] = r.nextInt(6);
    }
    return out;
  }

  private static int bucketsOf(int[] spans) {
    int n = 0;
    for (int i = 1; i < spans.length; i += 2) {
      n += spans[i];
    }
    return n;
  }

  /** Enough increasing bounds for the highest bucket index the spans use. */
  private double[] bounds(int[] pos) {
    int highest = 0;
    int idx = -1;
    for (int i = 0; i < pos.length; i += 2) {
      idx += pos[i] + pos[i + 1];
      highest = Math.max(highest, idx);
    }
    double[] pick = BOUNDS.clone();
    Arrays.sort(pick);
    double[] out = new double[highest + 1];
    double extra = pick[pick.length - 1];
    for (int i = 0; i < out.length; i++) {
      out[i] = i < pick.length ? pick[i] : (extra += 1.5);
    }
    return out;
  }

  private double[] counts(int n) {
    double[] out = new double[n];
    for (int i = 0; i < n; i++) {
      out[i] = count();
    }
    return out;
  }

  private double count() {
    if (isFloat) {
      return switch (r.nextInt(4)) {
        case 0 -> 0;
        case 1 -> r.nextDouble() * 10;
        case 2 -> r.nextInt(100);
        default -> r.nextDouble() * 1e9;
      };
    }
    return switch (r.nextInt(4)) {
      case 0 -> 0;
      case 1 -> r.nextInt(10);
      case 2 -> r.nextInt(100_000);
      default -> (double) (r.nextLong() >>> 24);
    };
  }

  private double[] step(double[] prev, boolean gauge) {
    double[] out = new double[prev.length];
    for (int i = 0; i < prev.length; i++) {
      double d = switch (r.nextInt(4)) {
        case 0 -> 0;
        case 1 -> isFloat ? r.nextDouble() : r.nextInt(5);
        case 2 -> isFloat ? r.nextDouble() * 1000 : r.nextInt(5000);
        default -> isFloat ? r.nextDouble() * 1e12 : (double) (r.nextLong() >>> 30);
      };
      out[i] = gauge && r.nextBoolean() ? Math.max(0, prev[i] - d) : prev[i] + d;
    }
    return out;
  }

  private double sum() {
    return switch (r.nextInt(10)) {
      case 0 -> Double.NaN;
      case 1 -> Double.POSITIVE_INFINITY;
      case 2 -> Double.NEGATIVE_INFINITY;
      case 3 -> 0;
      default -> r.nextGaussian() * Math.pow(10, r.nextInt(12));
    };
  }
}
