package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;

/**
 * The bucket layout a histogram chunk writes once, after its 3-byte header (Prometheus'
 * {@code writeHistogramChunkLayout} in {@code histogram_meta.go}): the zero threshold (one byte
 * for 0 and for powers of two 2^-243..2^10, else 255 and the 64-bit float), the schema as a varbit
 * integer, the positive then negative spans (a varbit count, then per span its length as varbit
 * unsigned and its offset as varbit signed) and, for custom buckets (schema -53) only, the upper
 * bounds (a varbit count, then each bound as {@code bound*1000+1} in varbit unsigned when that is a
 * whole number up to 33554430, else a 0 bit and the 64-bit float).
 *
 * <p>Spans are interleaved {@code [offset, length, ...]} as in {@link NativeHistogram}.
 */
record HistogramLayout(int schema, double zeroThreshold, int[] positiveSpans, int[] negativeSpans,
    double[] customValues) {

  /** The layout of a stale marker: Prometheus writes an empty histogram for it. */
  static final HistogramLayout EMPTY =
      new HistogramLayout(0, 0, new int[0], new int[0], new double[0]);

  /** Largest custom bound times 1000 that Prometheus stores in at most 4 varbit bytes. */
  private static final double MAX_COMPACT_BOUND = 33554430;

  static HistogramLayout of(NativeHistogram h) {
    return new HistogramLayout(h.schema(), h.zeroThreshold(), h.positiveSpans(), h.negativeSpans(),
        h.customValues());
  }

  int positiveBucketCount() {
    return countBuckets(positiveSpans);
  }

  int negativeBucketCount() {
    return countBuckets(negativeSpans);
  }

  /** Same schema, zero threshold (bit for bit), spans and custom bounds as {@code h}. */
  boolean matches(NativeHistogram h) {
    return schema == h.schema()
        && Double.doubleToLongBits(zeroThreshold) == Double.doubleToLongBits(h.zeroThreshold())
        && Arrays.equals(positiveSpans, h.positiveSpans())
        && Arrays.equals(negativeSpans, h.negativeSpans())
        && Arrays.equals(customValues, h.customValues());
  }

  void write(BitWriter w) {
    writeZeroThreshold(w, zeroThreshold);
    w.writeVarbitInt(schema);
    writeSpans(w, positiveSpans);
    writeSpans(w, negativeSpans);
    if (schema == NativeHistogram.CUSTOM_BUCKETS_SCHEMA) {
      w.writeVarbitUint(customValues.length);
      for (double bound : customValues) {
        writeCustomBound(w, bound);
      }
    }
  }

  static HistogramLayout read(BitReader r) {
    double zt = readZeroThreshold(r);
    long schema = r.readVarbitInt();
    if (schema != NativeHistogram.CUSTOM_BUCKETS_SCHEMA && (schema < -4 || schema > 8)) {
      throw new IllegalStateException("histogram chunk has unknown schema " + schema);
    }
    int[] pos = readSpans(r);
    int[] neg = readSpans(r);
    double[] custom = new double[0];
    if (schema == NativeHistogram.CUSTOM_BUCKETS_SCHEMA) {
      custom = new double[checkedCount(r.readVarbitUint(), "custom bounds")];
      for (int i = 0; i < custom.length; i++) {
        custom[i] = readCustomBound(r);
      }
    }
    return new HistogramLayout((int) schema, zt, pos, neg, custom);
  }

  private static int countBuckets(int[] spans) {
    int n = 0;
    for (int i = 1; i < spans.length; i += 2) {
      n += spans[i];
    }
    return n;
  }

  private static void writeSpans(BitWriter w, int[] spans) {
    w.writeVarbitUint(spans.length / 2);
    for (int i = 0; i < spans.length; i += 2) {
      w.writeVarbitUint(Integer.toUnsignedLong(spans[i + 1]));
      w.writeVarbitInt(spans[i]);
    }
  }

  private static int[] readSpans(BitReader r) {
    int n = checkedCount(r.readVarbitUint(), "spans");
    int[] spans = new int[2 * n];
    for (int i = 0; i < n; i++) {
      long length = r.readVarbitUint();
      if (length > Integer.MAX_VALUE) {
        throw new IllegalStateException("histogram span length " + length + " out of range");
      }
      spans[2 * i + 1] = (int) length;
      spans[2 * i] = (int) r.readVarbitInt();
    }
    return spans;
  }

  /** Counts come from the chunk; a corrupt one must not make us allocate gigabytes. */
  private static int checkedCount(long n, String what) {
    if (n < 0 || n > 1 << 16) {
      throw new IllegalStateException("histogram chunk declares " + n + " " + what);
    }
    return (int) n;
  }

  static void writeZeroThreshold(BitWriter w, double threshold) {
    if (threshold == 0) {
      w.writeByte(0);
      return;
    }
    int exp = frexpExponent(threshold);
    // A power of two is 0.5 * 2^exp with frexp's normalisation; only those get the one-byte form.
    if (threshold != Math.scalb(0.5, exp) || exp < -242 || exp > 11) {
      w.writeByte(255);
      w.writeDouble(threshold);
      return;
    }
    w.writeByte(exp + 243);
  }

  static double readZeroThreshold(BitReader r) {
    int b = r.readByte();
    return switch (b) {
      case 0 -> 0;
      case 255 -> r.readDouble();
      default -> Math.scalb(0.5, b - 243);
    };
  }

  /** The exponent Go's {@code math.Frexp} returns: x = frac * 2^exp with |frac| in [0.5, 1). */
  private static int frexpExponent(double x) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return Integer.MAX_VALUE;
    }
    return Math.getExponent(x) == Double.MIN_EXPONENT - 1
        ? Math.getExponent(x * 0x1p54) - 54 + 1
        : Math.getExponent(x) + 1;
  }

  private static void writeCustomBound(BitWriter w, double bound) {
    double scaled = bound * 1000;
    if (scaled < 0 || scaled > MAX_COMPACT_BOUND || !wholeWhenTimes1000(bound)) {
      w.writeBit(false);
      w.writeDouble(bound);
      return;
    }
    w.writeVarbitUint(Math.round(scaled) + 1);
  }

  /** Go's {@code isWholeWhenMultiplied}: bound*1000 rounds to an integer that divides back to it. */
  private static boolean wholeWhenTimes1000(double bound) {
    long i = Math.round(bound * 1000);
    return (double) i / 1000 == bound;
  }

  private static double readCustomBound(BitReader r) {
    long v = r.readVarbitUint();
    return v == 0 ? r.readDouble() : (double) (v - 1) / 1000;
  }
}
