package dev.weir.storage.wire;

import dev.weir.storage.tsdb.chunk.HistogramReduction;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import java.util.Arrays;

/**
 * Decodes one {@code Histogram} message (remote write 1.0 and 2.0 share its field numbers) into a
 * {@link NativeHistogram}: integer deltas become absolute counts, float counts are taken as they
 * are. Call it only on a histogram {@link HistogramCheck} found consistent (spans and buckets
 * agree, no mixing of integer and float buckets). A histogram is a float histogram when its count
 * is {@code count_float} (as Prometheus' {@code IsFloatHistogram}). A schema of 9..52 (finer than
 * Prometheus stores; {@link HistogramCheck} accepts it) comes out reduced to 8, neighbouring
 * buckets merged, as Prometheus' remote write receiver does before appending
 * ({@code ReduceResolution(ExponentialSchemaMax)}), so every path that decodes (push, Kafka
 * records, block-builder, querier) sees only storable schemas. Not thread-safe (reusable
 * cursors); one per {@link WireSeries}.
 */
final class HistogramDecoder {
  private final ProtoReader r = new ProtoReader();
  private final ProtoReader sub = new ProtoReader();

  /** Growable scratch lists; copied out exactly sized per histogram. */
  private int[] posSpans = new int[8];
  private int posSpanLen;
  private int[] negSpans = new int[8];
  private int negSpanLen;
  private double[] pos = new double[32];
  private int posLen;
  private double[] neg = new double[32];
  private int negLen;
  private double[] custom = new double[16];
  private int customLen;
  private long posCurrent;
  private long negCurrent;

  /** The histogram in {@code buf[off, off+len)}; its {@code timestamp} field is returned by {@link #timestamp}. */
  NativeHistogram decode(byte[] buf, int off, int len) {
    posSpanLen = 0;
    negSpanLen = 0;
    posLen = 0;
    negLen = 0;
    customLen = 0;
    posCurrent = 0;
    negCurrent = 0;
    boolean isFloat = false;
    double count = 0;
    double zeroCount = 0;
    double sum = 0;
    double zeroThreshold = 0;
    int schema = 0;
    int resetHint = 0;
    r.reset(buf, off, len);
    while (r.more()) {
      int tag = r.tag();
      int f = tag >>> 3;
      int wt = tag & 7;
      switch (f) {
        case 1 -> {
          if (wt != ProtoReader.VARINT) {
            r.skip(wt);
            continue;
          }
          count = (double) r.varint();
          isFloat = false;
        }
        case 2 -> {
          if (wt != ProtoReader.FIXED64) {
            r.skip(wt);
            continue;
          }
          count = Double.longBitsToDouble(r.fixed64());
          isFloat = true;
        }
        case 3 -> sum = wt == ProtoReader.FIXED64 ? Double.longBitsToDouble(r.fixed64()) : skip(wt);
        case 4 -> schema = wt == ProtoReader.VARINT ? (int) zigzag(r.varint()) : (int) skip(wt);
        case 5 -> zeroThreshold = wt == ProtoReader.FIXED64 ? Double.longBitsToDouble(r.fixed64()) : skip(wt);
        case 6 -> zeroCount = wt == ProtoReader.VARINT ? (double) r.varint() : skip(wt);
        case 7 -> zeroCount = wt == ProtoReader.FIXED64 ? Double.longBitsToDouble(r.fixed64()) : skip(wt);
        case 8, 11 -> {
          if (wt != ProtoReader.LEN) {
            r.skip(wt);
            continue;
          }
          int s = r.lengthDelimited();
          span(f == 11, buf, s, r.pos - s);
        }
        case 9, 12 -> deltas(f == 12, wt);
        case 10, 13 -> counts(f == 13, wt);
        case 14 -> resetHint = wt == ProtoReader.VARINT ? (int) r.varint() : (int) skip(wt);
        case 16 -> customValues(wt);
        default -> r.skip(wt);
      }
    }
    if (resetHint < NativeHistogram.RESET_UNKNOWN || resetHint > NativeHistogram.RESET_GAUGE) {
      resetHint = NativeHistogram.RESET_UNKNOWN;
    }
    NativeHistogram h = new NativeHistogram(isFloat, resetHint, schema, zeroThreshold, zeroCount, count, sum,
        Arrays.copyOf(posSpans, posSpanLen), Arrays.copyOf(pos, posLen), Arrays.copyOf(negSpans, negSpanLen),
        Arrays.copyOf(neg, negLen), schema == NativeHistogram.CUSTOM_BUCKETS_SCHEMA
            ? Arrays.copyOf(custom, customLen) : new double[0]);
    return schema > HistogramReduction.MAX_SCHEMA && schema <= HistogramCheck.MAX_RESERVED_SCHEMA
        ? HistogramReduction.toSchema(h, HistogramReduction.MAX_SCHEMA) : h;
  }

  /** The {@code timestamp} field (15) of the histogram in {@code buf[off, off+len)}, 0 when unset. */
  long timestamp(byte[] buf, int off, int len) {
    r.reset(buf, off, len);
    long t = 0;
    while (r.more()) {
      int tag = r.tag();
      if ((tag >>> 3) == 15 && (tag & 7) == ProtoReader.VARINT) {
        t = r.varint();
      } else {
        r.skip(tag & 7);
      }
    }
    return t;
  }

  private double skip(int wt) {
    r.skip(wt);
    return 0;
  }

  private static long zigzag(long z) {
    return (z >>> 1) ^ -(z & 1);
  }

  private void span(boolean positive, byte[] buf, int off, int len) {
    sub.reset(buf, off, len);
    int offset = 0;
    int length = 0;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      if ((tag >>> 3) == 1 && wt == ProtoReader.VARINT) {
        offset = (int) zigzag(sub.varint());
      } else if ((tag >>> 3) == 2 && wt == ProtoReader.VARINT) {
        length = (int) sub.varint();
      } else {
        sub.skip(wt);
      }
    }
    if (positive) {
      posSpans = grow(posSpans, posSpanLen + 2);
      posSpans[posSpanLen++] = offset;
      posSpans[posSpanLen++] = length;
    } else {
      negSpans = grow(negSpans, negSpanLen + 2);
      negSpans[negSpanLen++] = offset;
      negSpans[negSpanLen++] = length;
    }
  }

  private void deltas(boolean positive, int wt) {
    if (wt == ProtoReader.VARINT) {
      delta(positive, r.varint());
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        delta(positive, sub.varint());
      }
    } else {
      r.skip(wt);
    }
  }

  private void delta(boolean positive, long z) {
    if (positive) {
      posCurrent += zigzag(z);
      pos = grow(pos, posLen + 1);
      pos[posLen++] = posCurrent;
    } else {
      negCurrent += zigzag(z);
      neg = grow(neg, negLen + 1);
      neg[negLen++] = negCurrent;
    }
  }

  private void counts(boolean positive, int wt) {
    if (wt == ProtoReader.FIXED64) {
      count(positive, Double.longBitsToDouble(r.fixed64()));
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        count(positive, Double.longBitsToDouble(sub.fixed64()));
      }
    } else {
      r.skip(wt);
    }
  }

  private void count(boolean positive, double c) {
    if (positive) {
      pos = grow(pos, posLen + 1);
      pos[posLen++] = c;
    } else {
      neg = grow(neg, negLen + 1);
      neg[negLen++] = c;
    }
  }

  private void customValues(int wt) {
    if (wt == ProtoReader.FIXED64) {
      custom = grow(custom, customLen + 1);
      custom[customLen++] = Double.longBitsToDouble(r.fixed64());
    } else if (wt == ProtoReader.LEN) {
      int s = r.lengthDelimited();
      sub.reset(r.buf, s, r.pos - s);
      while (sub.more()) {
        custom = grow(custom, customLen + 1);
        custom[customLen++] = Double.longBitsToDouble(sub.fixed64());
      }
    } else {
      r.skip(wt);
    }
  }

  private static int[] grow(int[] a, int need) {
    return need <= a.length ? a : Arrays.copyOf(a, Math.max(need, a.length * 2));
  }

  private static double[] grow(double[] a, int need) {
    return need <= a.length ? a : Arrays.copyOf(a, Math.max(need, a.length * 2));
  }
}
