package dev.weir.ingester.api;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * An OTLP exponential histogram data point as a Prometheus native histogram, as Prometheus'
 * {@code otlptranslator} converts it: the scale is the schema (a scale above 8 is lowered to 8 by
 * merging 2^(scale-8) neighbouring buckets; below -4 is refused); OTLP bucket {@code k} covers
 * {@code (base^k, base^(k+1)]} where Prometheus bucket {@code k+1} does, so indexes shift by one;
 * runs of more than two empty buckets become a gap between spans; zero count and threshold carry
 * over. Counts are integers. Stateless.
 */
final class OtlpExponentialHistograms {
  /** Runs of empty buckets longer than this start a new span (shorter ones are kept as zeros). */
  private static final int MAX_EMPTY_RUN = 2;

  private OtlpExponentialHistograms() {}

  /** Why the point cannot be converted, or null. */
  static @Nullable String problem(ExponentialHistogramDataPoint p) {
    if (p.getScale() < -4) {
      return "scale " + p.getScale() + " is below -4, the lowest native histogram schema";
    }
    if (Double.isNaN(p.getZeroThreshold()) || p.getZeroThreshold() < 0) {
      return "zero threshold " + p.getZeroThreshold() + " is not a non-negative number";
    }
    return null;
  }

  /** The native histogram of a point {@link #problem} accepted; {@code stale} sets Prometheus' stale marker as the sum. */
  static NativeHistogram convert(ExponentialHistogramDataPoint p, double staleSum, boolean stale) {
    int scaleDown = Math.max(0, p.getScale() - 8);
    int schema = p.getScale() - scaleDown;
    Side pos = side(p.getPositive().getOffset(), p.getPositive().getBucketCountsList(), scaleDown);
    Side neg = side(p.getNegative().getOffset(), p.getNegative().getBucketCountsList(), scaleDown);
    double sum = stale ? staleSum : p.getSum();
    return new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN, schema, p.getZeroThreshold(), p.getZeroCount(),
        p.getCount(), sum, pos.spans, pos.counts, neg.spans, neg.counts, new double[0]);
  }

  private record Side(int[] spans, double[] counts) {}

  private static Side side(int offset, java.util.List<Long> counts, int scaleDown) {
    // Merge into Prometheus indexes first: OTLP index i maps to ((i >> scaleDown) + 1).
    long[] idx = new long[counts.size()];
    double[] val = new double[counts.size()];
    int n = 0;
    for (int i = 0; i < counts.size(); i++) {
      long target = (((long) offset + i) >> scaleDown) + 1;
      if (n > 0 && idx[n - 1] == target) {
        val[n - 1] += counts.get(i);
      } else {
        idx[n] = target;
        val[n] = counts.get(i);
        n++;
      }
    }
    // Trim empty buckets at both ends.
    int from = 0;
    while (from < n && val[from] == 0) {
      from++;
    }
    int to = n;
    while (to > from && val[to - 1] == 0) {
      to--;
    }
    int[] spans = new int[2 * Math.max(1, to - from)];
    double[] out = new double[to - from];
    int ns = 0;
    int nb = 0;
    long prevEnd = 0;
    int i = from;
    while (i < to) {
      // A span from i to the next run of more than MAX_EMPTY_RUN empty buckets.
      int end = i + 1;
      while (end < to) {
        if (val[end] != 0) {
          end++;
          continue;
        }
        int run = end;
        while (run < to && val[run] == 0) {
          run++;
        }
        if (run - end > MAX_EMPTY_RUN) {
          break;
        }
        end = run;
      }
      spans[ns] = (int) (ns == 0 ? idx[i] : idx[i] - prevEnd);
      spans[ns + 1] = end - i;
      ns += 2;
      for (int k = i; k < end; k++) {
        out[nb++] = val[k];
      }
      prevEnd = idx[end - 1] + 1;
      i = end;
      while (i < to && val[i] == 0) {
        i++;
      }
    }
    return new Side(Arrays.copyOf(spans, ns), Arrays.copyOf(out, nb));
  }
}
