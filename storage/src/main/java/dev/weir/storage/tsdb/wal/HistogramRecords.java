package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;

/**
 * WAL records of native histogram samples, in the payload encodings of Prometheus'
 * {@code tsdb/record/record.go}, framed like every other record ({@link WalRecords}):
 *
 * <pre>
 * HISTOGRAM_SAMPLES                      (7): integer histograms, exponential buckets
 * FLOAT_HISTOGRAM_SAMPLES                (8): float histograms, exponential buckets
 * CUSTOM_BUCKETS_HISTOGRAM_SAMPLES       (9): integer histograms, custom buckets (schema -53)
 * CUSTOM_BUCKETS_FLOAT_HISTOGRAM_SAMPLES (10): float histograms, custom buckets
 *
 * payload: type (1 byte) | base ref (8 bytes BE) | base t (8 bytes BE) | per sample:
 *   ref - base ref (varint), t - base t (varint), histogram
 * integer histogram: reset hint (1 byte), schema (varint), zero threshold (8 bytes BE float),
 *   zero count (uvarint), count (uvarint), sum (8 bytes BE float), positive spans, negative spans
 *   (each: count (uvarint), per span offset (varint) and length (uvarint)), positive buckets,
 *   negative buckets (each: count (uvarint), per bucket the delta to the previous one (varint)),
 *   custom bounds when the schema is -53 (count (uvarint), each 8 bytes BE float)
 * float histogram: the same with zero count, count and every bucket count as 8-byte BE floats
 * </pre>
 *
 * <p>Stateless.
 */
public final class HistogramRecords {
  public static final int TYPE_HISTOGRAM_SAMPLES = 7;
  public static final int TYPE_FLOAT_HISTOGRAM_SAMPLES = 8;
  public static final int TYPE_CUSTOM_BUCKETS_HISTOGRAM_SAMPLES = 9;
  public static final int TYPE_CUSTOM_BUCKETS_FLOAT_HISTOGRAM_SAMPLES = 10;
  /** Type byte, base ref and base time. */
  private static final int HEADER_BYTES = 1 + 8 + 8;
  /** Bound on the ref and time deltas of one sample (zig-zag varints). */
  private static final int DELTA_BYTES = 10 + 10;

  private HistogramRecords() {}

  /** Whether {@code type} is one of the histogram record types. */
  public static boolean isHistogramType(int type) {
    return type >= TYPE_HISTOGRAM_SAMPLES && type <= TYPE_CUSTOM_BUCKETS_FLOAT_HISTOGRAM_SAMPLES;
  }

  /** The record type a histogram is logged under. */
  public static int typeOf(NativeHistogram h) {
    if (h.customBuckets()) {
      return h.isFloat() ? TYPE_CUSTOM_BUCKETS_FLOAT_HISTOGRAM_SAMPLES : TYPE_CUSTOM_BUCKETS_HISTOGRAM_SAMPLES;
    }
    return h.isFloat() ? TYPE_FLOAT_HISTOGRAM_SAMPLES : TYPE_HISTOGRAM_SAMPLES;
  }

  /**
   * Appends the first {@code n} histogram samples in their order: a record holds a run of samples
   * of one type, and a new record starts where the type changes or the payload would exceed
   * {@code maxPayload} (a single larger sample gets a record of its own), so a replay applies them
   * in the order they were committed.
   */
  public static void append(ByteSink sink, int[] refs, long[] ts, NativeHistogram[] hs, int n, int maxPayload) {
    ByteSink body = new ByteSink(256);
    int start = -1;
    int type = -1;
    int payload = 0;
    int baseRef = 0;
    long baseT = 0;
    for (int i = 0; i < n; i++) {
      body.reset();
      encode(body, hs[i]);
      int t = typeOf(hs[i]);
      if (start >= 0 && (t != type || payload + DELTA_BYTES + body.length() > maxPayload)) {
        WalRecords.end(sink, start);
        start = -1;
      }
      if (start < 0) {
        start = WalRecords.begin(sink, t);
        type = t;
        baseRef = refs[i];
        baseT = ts[i];
        sink.putBe64(baseRef).putBe64(baseT);
        payload = HEADER_BYTES;
      }
      int before = sink.length();
      sink.putVarint((long) refs[i] - baseRef).putVarint(ts[i] - baseT).put(body.array(), 0, body.length());
      payload += sink.length() - before;
    }
    if (start >= 0) {
      WalRecords.end(sink, start);
    }
  }

  /** Writes one histogram in the encoding of its type (record.go's EncodeHistogram / EncodeFloatHistogram). */
  static void encode(ByteSink out, NativeHistogram h) {
    out.put(h.counterResetHint());
    out.putVarint(h.schema());
    out.putDouble(h.zeroThreshold());
    if (h.isFloat()) {
      out.putDouble(h.zeroCount()).putDouble(h.count());
    } else {
      out.putUvarint((long) h.zeroCount()).putUvarint((long) h.count());
    }
    out.putDouble(h.sum());
    spans(out, h.positiveSpans());
    spans(out, h.negativeSpans());
    buckets(out, h.positiveBuckets(), h.isFloat());
    buckets(out, h.negativeBuckets(), h.isFloat());
    if (h.customBuckets()) {
      double[] cv = h.customValues();
      out.putUvarint(cv.length);
      for (double v : cv) {
        out.putDouble(v);
      }
    }
  }

  private static void spans(ByteSink out, int[] spans) {
    out.putUvarint(spans.length / 2);
    for (int i = 0; i < spans.length; i += 2) {
      out.putVarint(spans[i]).putUvarint(spans[i + 1] & 0xffffffffL);
    }
  }

  private static void buckets(ByteSink out, double[] buckets, boolean isFloat) {
    out.putUvarint(buckets.length);
    long prev = 0;
    for (double b : buckets) {
      if (isFloat) {
        out.putDouble(b);
      } else {
        long c = (long) b;
        out.putVarint(c - prev);
        prev = c;
      }
    }
  }

  /**
   * Decodes the payload of a histogram record whose type byte {@code type} was read; calls the
   * visitor for each sample.
   *
   * @throws IllegalStateException when the payload is malformed
   */
  static void decode(int type, ByteSource in, WalRecords.Visitor v) {
    if (in.remaining() == 0) {
      return;
    }
    long baseRef = in.be64();
    long baseT = in.be64();
    boolean isFloat = type == TYPE_FLOAT_HISTOGRAM_SAMPLES || type == TYPE_CUSTOM_BUCKETS_FLOAT_HISTOGRAM_SAMPLES;
    while (in.remaining() > 0) {
      int ref = (int) (baseRef + in.varint());
      long t = baseT + in.varint();
      NativeHistogram h = decodeHistogram(in, isFloat);
      try {
        v.histogram(ref, t, h);
      } catch (RuntimeException e) {
        throw new WalRecords.VisitorException(e);
      }
    }
  }

  static NativeHistogram decodeHistogram(ByteSource in, boolean isFloat) {
    int hint = in.get();
    int schema = (int) in.varint();
    double zeroThreshold = in.getDouble();
    double zeroCount = isFloat ? in.getDouble() : (double) in.uvarint();
    double count = isFloat ? in.getDouble() : (double) in.uvarint();
    double sum = in.getDouble();
    int[] pos = spans(in);
    int[] neg = spans(in);
    double[] posBuckets = buckets(in, isFloat);
    double[] negBuckets = buckets(in, isFloat);
    double[] custom = new double[0];
    if (schema == NativeHistogram.CUSTOM_BUCKETS_SCHEMA) {
      custom = new double[checkedLength(in.uvarint(), in)];
      for (int i = 0; i < custom.length; i++) {
        custom[i] = in.getDouble();
      }
    }
    if (hint > NativeHistogram.RESET_GAUGE) {
      throw new IllegalStateException("unknown counter reset hint " + hint);
    }
    return new NativeHistogram(isFloat, hint, schema, zeroThreshold, zeroCount, count, sum, pos, posBuckets, neg,
        negBuckets, custom);
  }

  private static int[] spans(ByteSource in) {
    int n = checkedLength(in.uvarint(), in);
    int[] s = new int[2 * n];
    for (int i = 0; i < s.length; i += 2) {
      s[i] = (int) in.varint();
      s[i + 1] = (int) in.uvarint();
    }
    return s;
  }

  private static double[] buckets(ByteSource in, boolean isFloat) {
    double[] b = new double[checkedLength(in.uvarint(), in)];
    long cur = 0;
    for (int i = 0; i < b.length; i++) {
      if (isFloat) {
        b[i] = in.getDouble();
      } else {
        cur += in.varint();
        b[i] = cur;
      }
    }
    return b;
  }

  /** A length read from the payload: each element takes at least one byte, so more than remain is corrupt. */
  private static int checkedLength(long n, ByteSource in) {
    if (n < 0 || n > in.remaining()) {
      throw new IllegalStateException("implausible histogram element count " + n);
    }
    return (int) n;
  }
}
