package dev.weir.storage.wire;

import dev.weir.proto.prompb.BucketSpan;
import dev.weir.proto.prompb.Histogram;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import org.jspecify.annotations.Nullable;

/**
 * Converts between the remote write 1.0 / remote read {@code prometheus.Histogram} message and
 * {@link NativeHistogram}, for the paths that work with protobuf objects (gRPC Push, the
 * distributors, remote read SAMPLES, the querier). Integer histograms are written with
 * {@code *_deltas} and integer counts, float histograms with {@code *_counts}. Stateless.
 */
public final class HistogramProtos {
  private HistogramProtos() {}

  /** The message for {@code h} at {@code timestampMillis}. */
  public static Histogram toProto(NativeHistogram h, long timestampMillis) {
    Histogram.Builder b = Histogram.newBuilder().setSum(h.sum()).setSchema(h.schema())
        .setZeroThreshold(h.zeroThreshold()).setResetHintValue(h.counterResetHint()).setTimestamp(timestampMillis);
    if (h.isFloat()) {
      b.setCountFloat(h.count()).setZeroCountFloat(h.zeroCount());
      for (double c : h.negativeBuckets()) {
        b.addNegativeCounts(c);
      }
      for (double c : h.positiveBuckets()) {
        b.addPositiveCounts(c);
      }
    } else {
      b.setCountInt((long) h.count()).setZeroCountInt((long) h.zeroCount());
      addDeltas(h.negativeBuckets(), b, false);
      addDeltas(h.positiveBuckets(), b, true);
    }
    addSpans(h.negativeSpans(), b, false);
    addSpans(h.positiveSpans(), b, true);
    for (double v : h.customValues()) {
      b.addCustomValues(v);
    }
    return b.build();
  }

  private static void addDeltas(double[] counts, Histogram.Builder b, boolean positive) {
    long prev = 0;
    for (double c : counts) {
      long v = (long) c;
      if (positive) {
        b.addPositiveDeltas(v - prev);
      } else {
        b.addNegativeDeltas(v - prev);
      }
      prev = v;
    }
  }

  private static void addSpans(int[] spans, Histogram.Builder b, boolean positive) {
    for (int i = 0; i < spans.length; i += 2) {
      BucketSpan s = BucketSpan.newBuilder().setOffset(spans[i]).setLength(spans[i + 1]).build();
      if (positive) {
        b.addPositiveSpans(s);
      } else {
        b.addNegativeSpans(s);
      }
    }
  }

  /** A message checked and decoded: either the histogram or why it is refused. */
  public record Decoded(@Nullable NativeHistogram histogram, @Nullable InvalidSeriesException problem) {}

  /**
   * Checks and decodes a message ({@link HistogramCheck}'s refusals: inconsistent spans, negative
   * counts, an integer count that disagrees with the buckets, unknown schema); a schema of 9..52
   * is decoded at 8.
   */
  public static Decoded fromProto(Histogram h) {
    return decode(h, true);
  }

  /**
   * {@link #fromProto} for a histogram a store sent back (the querier): the same checks but the
   * count rule, so a histogram stored before that rule existed is still read.
   */
  public static Decoded fromStored(Histogram h) {
    return decode(h, false);
  }

  private static Decoded decode(Histogram h, boolean checkCount) {
    byte[] b = h.toByteArray();
    InvalidSeriesException p = new HistogramCheck().problem(b, 0, b.length, checkCount);
    if (p != null) {
      return new Decoded(null, p);
    }
    return new Decoded(new HistogramDecoder().decode(b, 0, b.length), null);
  }
}
