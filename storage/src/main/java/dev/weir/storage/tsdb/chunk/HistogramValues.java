package dev.weir.storage.tsdb.chunk;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Helpers over {@link NativeHistogram} samples that the head, the querier and the block builder
 * share: comparing sample values, and cutting a run of samples into histogram chunks. Stateless.
 */
public final class HistogramValues {
  private HistogramValues() {}

  /**
   * Whether two histograms are the same sample value: equal apart from the counter reset hint, which
   * a chunk does not keep as it was sent (it returns what its header implies).
   */
  public static boolean sameValue(NativeHistogram a, NativeHistogram b) {
    if (a.counterResetHint() == b.counterResetHint()) {
      return a.equals(b);
    }
    return a.isFloat() == b.isFloat() && a.sameLayout(b)
        && Double.doubleToLongBits(a.zeroCount()) == Double.doubleToLongBits(b.zeroCount())
        && Double.doubleToLongBits(a.count()) == Double.doubleToLongBits(b.count())
        && Double.doubleToLongBits(a.sum()) == Double.doubleToLongBits(b.sum())
        && Arrays.equals(a.positiveBuckets(), b.positiveBuckets())
        && Arrays.equals(a.negativeBuckets(), b.negativeBuckets());
  }

  /** One encoded chunk: encoding ({@link Chunks}), time range, bytes. */
  public record Encoded(byte encoding, long minTime, long maxTime, byte[] bytes) {}

  /**
   * Encodes histogram samples in ascending, unique timestamp order as histogram and float
   * histogram chunks of at most {@code maxSamples} samples, cutting a new chunk where the kind
   * changes or the chunk appender turns a sample down.
   */
  public static List<Encoded> encode(long[] ts, NativeHistogram[] hs, int n, int maxSamples) {
    List<Encoded> out = new ArrayList<>();
    HistogramChunkAppender ints = null;
    FloatHistogramChunkAppender floats = null;
    for (int i = 0; i < n; i++) {
      NativeHistogram h = hs[i];
      boolean ok = h.isFloat() ? floats != null && floats.append(ts[i], h) : ints != null && ints.append(ts[i], h);
      if (ok) {
        continue;
      }
      flush(out, ints, floats);
      ints = null;
      floats = null;
      if (h.isFloat()) {
        floats = new FloatHistogramChunkAppender(maxSamples);
        floats.append(ts[i], h);
      } else {
        ints = new HistogramChunkAppender(maxSamples);
        ints.append(ts[i], h);
      }
    }
    flush(out, ints, floats);
    return out;
  }

  private static void flush(List<Encoded> out, HistogramChunkAppender ints, FloatHistogramChunkAppender floats) {
    if (ints != null && ints.numSamples() > 0) {
      out.add(new Encoded(Chunks.HISTOGRAM, ints.minTime(), ints.maxTime(), ints.bytes()));
    }
    if (floats != null && floats.numSamples() > 0) {
      out.add(new Encoded(Chunks.FLOAT_HISTOGRAM, floats.minTime(), floats.maxTime(), floats.bytes()));
    }
  }
}
