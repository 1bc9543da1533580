package dev.weir.storage.wire;

import org.jspecify.annotations.Nullable;

/**
 * Checks one native histogram message ({@code Histogram} of remote write 1.0 and 2.0, which share
 * field numbers) for what makes it meaningless: spans whose lengths do not add up to the bucket
 * counts, a span after the first with a negative offset, integer and float buckets mixed, and
 * negative counts (a float count below zero, or integer deltas that take a bucket below zero), and
 * a schema that is neither exponential (-4..8) nor custom buckets (-53).
 * Stateless apart from the reusable cursor; not thread-safe.
 */
final class HistogramCheck {
  static final String SPANS_REASON = "native_histogram_span_bucket_mismatch";
  static final String NEGATIVE_REASON = "native_histogram_negative_count";
  static final String SCHEMA_REASON = "invalid_native_histogram_schema";
  static final String CUSTOM_REASON = "native_histogram_custom_buckets_invalid";
  static final String COUNT_MISMATCH_REASON = "native_histogram_count_mismatch";
  static final String COUNT_NOT_BIG_ENOUGH_REASON = "native_histogram_count_not_big_enough";
  /** Prometheus' {@code ExponentialSchemaMaxReserved}: finer schemas up to it are accepted and reduced to 8. */
  static final int MAX_RESERVED_SCHEMA = 52;

  private static final int COUNT_INT = 1;
  private static final int SUM = 3;

  private static final int COUNT_FLOAT = 2;
  private static final int SCHEMA = 4;
  private static final int ZERO_COUNT_FLOAT = 7;
  private static final int NEGATIVE_SPANS = 8;
  private static final int NEGATIVE_DELTAS = 9;
  private static final int NEGATIVE_COUNTS = 10;
  private static final int POSITIVE_SPANS = 11;
  private static final int POSITIVE_DELTAS = 12;
  private static final int POSITIVE_COUNTS = 13;
  private static final int ZERO_THRESHOLD = 5;
  private static final int ZERO_COUNT_INT = 6;
  private static final int CUSTOM_VALUES = 16;

  private final ProtoReader r = new ProtoReader();
  private final ProtoReader sub = new ProtoReader();

  /** The two sides of a histogram: buckets below and above the zero bucket. */
  private static final class Side {
    long spanBuckets;
    /** Index after the last bucket the spans describe. */
    long end;
    long firstOffset;
    long deltas;
    long counts;
    int spans;
    long current;
    /** Sum of the absolute integer bucket counts (wraps as Prometheus' uint64 does). */
    long total;
    boolean negative;
    boolean badOffset;

    void clear() {
      spanBuckets = 0;
      end = 0;
      firstOffset = 0;
      deltas = 0;
      counts = 0;
      spans = 0;
      current = 0;
      total = 0;
      negative = false;
      badOffset = false;
    }
  }

  private final Side neg = new Side();
  private final Side pos = new Side();

  /**
   * The problem with the histogram in {@code buf[off, off+len)} (reason and message, without the
   * series), or null when it is consistent.
   *
   * @throws WireFormatException when the bytes are not a well-formed Histogram
   */
  @Nullable InvalidSeriesException problem(byte[] buf, int off, int len) {
    return problem(buf, off, len, true);
  }

  /**
   * As {@link #problem(byte[], int, int)}; {@code checkCount} false skips the count rule, for
   * histograms read back from storage (stored before the rule existed, they must still be read).
   */
  @Nullable InvalidSeriesException problem(byte[] buf, int off, int len, boolean checkCount) {
    neg.clear();
    pos.clear();
    boolean negativeTotal = false;
    long schema = 0;
    boolean zeroBucket = false;
    boolean isFloat = false;
    long count = 0;
    long zeroCount = 0;
    double sum = 0;
    customValues = 0;
    customIncreasing = true;
    r.reset(buf, off, len);
    while (r.more()) {
      int tag = r.tag();
      int f = tag >>> 3;
      int wt = tag & 7;
      if (f == COUNT_INT && wt == ProtoReader.VARINT) {
        count = r.varint();
        isFloat = false;
      } else if (f == COUNT_FLOAT && wt == ProtoReader.FIXED64) {
        negativeTotal |= Double.longBitsToDouble(r.fixed64()) < 0;
        isFloat = true;
      } else if (f == SUM && wt == ProtoReader.FIXED64) {
        sum = Double.longBitsToDouble(r.fixed64());
      } else if (f == ZERO_THRESHOLD && wt == ProtoReader.FIXED64) {
        zeroBucket |= Double.longBitsToDouble(r.fixed64()) != 0;
      } else if (f == ZERO_COUNT_INT && wt == ProtoReader.VARINT) {
        zeroCount = r.varint();
        zeroBucket |= zeroCount != 0;
      } else if (f == ZERO_COUNT_FLOAT && wt == ProtoReader.FIXED64) {
        double z = Double.longBitsToDouble(r.fixed64());
        negativeTotal |= z < 0;
        zeroBucket |= z != 0;
      } else if (f == CUSTOM_VALUES) {
        customValues(wt);
      } else if (f == SCHEMA && wt == ProtoReader.VARINT) {
        long z = r.varint();
        schema = (z >>> 1) ^ -(z & 1);
      } else if ((f == NEGATIVE_SPANS || f == POSITIVE_SPANS) && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        span(f == NEGATIVE_SPANS ? neg : pos, buf, s, r.pos - s);
      } else if (f == NEGATIVE_DELTAS || f == POSITIVE_DELTAS) {
        deltas(f == NEGATIVE_DELTAS ? neg : pos, wt);
      } else if (f == NEGATIVE_COUNTS || f == POSITIVE_COUNTS) {
        counts(f == NEGATIVE_COUNTS ? neg : pos, wt);
      } else {
        r.skip(wt);
      }
    }
    if ((schema < -4 || schema > MAX_RESERVED_SCHEMA) && schema != -53) {
      return new InvalidSeriesException(SCHEMA_REASON, "native histogram has schema " + schema
          + ": only -4..52 (exponential buckets; above 8 stored at 8) and -53 (custom buckets) are valid");
    }
    for (Side side : new Side[] {neg, pos}) {
      String name = side == neg ? "negative" : "positive";
      if (side.deltas > 0 && side.counts > 0) {
        return new InvalidSeriesException(SPANS_REASON, "native histogram has both integer " + name + "_deltas and"
            + " float " + name + "_counts");
      }
      long buckets = side.deltas + side.counts;
      if (buckets != side.spanBuckets) {
        return new InvalidSeriesException(SPANS_REASON, "native histogram " + name + " spans describe "
            + side.spanBuckets + " buckets but " + buckets + " bucket counts are given");
      }
      if (side.badOffset) {
        return new InvalidSeriesException(SPANS_REASON, "native histogram has a " + name + " span after the first"
            + " with a negative offset");
      }
      if (side.negative) {
        return new InvalidSeriesException(NEGATIVE_REASON, "native histogram has a negative " + name
            + " bucket count");
      }
    }
    if (negativeTotal) {
      return new InvalidSeriesException(NEGATIVE_REASON, "native histogram has a negative count or zero count");
    }
    InvalidSeriesException custom = schema == -53 ? customProblem(zeroBucket) : null;
    return custom != null || isFloat || !checkCount ? custom : countProblem(count, zeroCount, sum);
  }

  /**
   * An integer histogram whose count disagrees with its buckets, as Prometheus'
   * {@code Histogram.Validate}: counts are unsigned 64-bit there, so sums wrap and compare unsigned.
   */
  private @Nullable InvalidSeriesException countProblem(long count, long zeroCount, double sum) {
    long inBuckets = neg.total + pos.total + zeroCount;
    if (Double.isNaN(sum)) {
      if (Long.compareUnsigned(inBuckets, count) > 0) {
        return new InvalidSeriesException(COUNT_NOT_BIG_ENOUGH_REASON, "native histogram has "
            + Long.toUnsignedString(inBuckets) + " observations in its buckets but a count of "
            + Long.toUnsignedString(count) + ": the count should be at least the number of observations in the"
            + " buckets");
      }
    } else if (inBuckets != count) {
      return new InvalidSeriesException(COUNT_MISMATCH_REASON, "native histogram has "
          + Long.toUnsignedString(inBuckets) + " observations in its buckets but a count of "
          + Long.toUnsignedString(count) + ": the count should equal the number of observations in the buckets"
          + " (in absence of NaN)");
    }
    return null;
  }

  private long customValues;
  private boolean customIncreasing;
  private double lastCustom;

  /** Custom buckets as Prometheus checks them: increasing finite bounds, positive buckets within them, nothing else. */
  private @Nullable InvalidSeriesException customProblem(boolean zeroBucket) {
    String why = null;
    if (!customIncreasing) {
      why = "custom bucket bounds are not finite and strictly increasing";
    } else if (neg.spanBuckets > 0 || neg.spans > 0) {
      why = "a custom-buckets histogram has negative buckets";
    } else if (zeroBucket) {
      why = "a custom-buckets histogram has a zero bucket";
    } else if (pos.spans > 0 && pos.firstOffset < 0) {
      why = "custom-bucket spans start at a negative index";
    } else if (pos.end > customValues + 1) {
      why = "custom-bucket spans reach bucket " + (pos.end - 1) + " but there are " + customValues
          + " bounds (" + (customValues + 1) + " buckets)";
    }
    return why == null ? null : new InvalidSeriesException(CUSTOM_REASON, "native histogram: " + why);
  }

  private void customValues(int wt) {
    if (wt == ProtoReader.FIXED64) {
      customValue(Double.longBitsToDouble(r.fixed64()));
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        customValue(Double.longBitsToDouble(sub.fixed64()));
      }
    } else {
      r.skip(wt);
    }
  }

  private void customValue(double v) {
    customIncreasing &= Double.isFinite(v) && (customValues == 0 || v > lastCustom);
    lastCustom = v;
    customValues++;
  }

  private void span(Side side, byte[] buf, int off, int len) {
    sub.reset(buf, off, len);
    long offset = 0;
    long length = 0;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      if ((tag >>> 3) == 1 && wt == ProtoReader.VARINT) {
        long z = sub.varint();
        offset = (z >>> 1) ^ -(z & 1);
      } else if ((tag >>> 3) == 2 && wt == ProtoReader.VARINT) {
        length = sub.varint() & 0xffffffffL;
      } else {
        sub.skip(wt);
      }
    }
    side.badOffset |= side.spans > 0 && offset < 0;
    if (side.spans == 0) {
      side.firstOffset = offset;
    }
    side.end += offset + length;
    side.spans++;
    side.spanBuckets += length;
  }

  private void deltas(Side side, int wt) {
    if (wt == ProtoReader.VARINT) {
      delta(side, r.varint());
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        delta(side, sub.varint());
      }
    } else {
      throw new WireFormatException("histogram deltas with wire type " + wt);
    }
  }

  private static void delta(Side side, long zigzag) {
    side.current += (zigzag >>> 1) ^ -(zigzag & 1);
    side.negative |= side.current < 0;
    side.total += side.current;
    side.deltas++;
  }

  private void counts(Side side, int wt) {
    if (wt == ProtoReader.FIXED64) {
      count(side, r.fixed64());
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        count(side, sub.fixed64());
      }
    } else {
      throw new WireFormatException("histogram counts with wire type " + wt);
    }
  }

  private static void count(Side side, long bits) {
    side.negative |= Double.longBitsToDouble(bits) < 0;
    side.counts++;
  }
}
