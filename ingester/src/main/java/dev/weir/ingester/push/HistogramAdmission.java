package dev.weir.ingester.push;

import dev.weir.storage.tsdb.chunk.HistogramReduction;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.wire.InvalidSeriesException;
import org.jspecify.annotations.Nullable;

/**
 * The checks a native histogram sample passes before it is stored or forwarded, as Mimir's
 * distributor applies them: consistent (spans, counts, schema), not too far in the future, and
 * within the tenant's {@code max_native_histogram_buckets}, lowering its resolution first when
 * {@code reduce_native_histogram_over_max_buckets} allows. Refusals are counted by reason in
 * {@link PushErrors}. Stateless.
 */
public final class HistogramAdmission {
  public static final String DISABLED_REASON = "native_histograms_disabled";
  public static final String MAX_BUCKETS_REASON = "max_native_histogram_buckets";

  private HistogramAdmission() {}

  /**
   * The histogram to store (possibly at a lower resolution), or null when it is refused.
   *
   * @param h the decoded histogram, null when {@code problem} is set
   * @param problem why the message is meaningless, or null
   * @param series the series, for messages
   */
  public static @Nullable NativeHistogram admit(@Nullable NativeHistogram h, @Nullable InvalidSeriesException problem,
      long t, long maxTime, Limits limits, String series, PushErrors errors) {
    if (problem != null || h == null) {
      String why = problem == null ? "undecodable native histogram" : problem.getMessage();
      errors.addHistograms(problem == null ? "bad_data" : problem.reason(), 1, why + ", timestamp: " + t
          + ", series: '" + series + "'");
      return null;
    }
    if (t > maxTime) {
      errors.addHistograms("sample_too_far_in_future", 1, "received a native histogram sample whose timestamp is"
          + " too far in the future, timestamp: " + t + ", series: '" + series + "'");
      return null;
    }
    int max = limits.maxNativeHistogramBuckets();
    if (max <= 0 || h.bucketCount() <= max) {
      return h;
    }
    NativeHistogram reduced = limits.reduceNativeHistogramOverMaxBuckets() ? HistogramReduction.withinBuckets(h, max)
        : null;
    if (reduced == null) {
      errors.addHistograms(MAX_BUCKETS_REASON, 1, "received a native histogram sample with too many buckets"
          + " (actual: " + h.bucketCount() + ", limit: " + max + (limits.reduceNativeHistogramOverMaxBuckets()
              ? ", and its resolution cannot be lowered enough" : "") + "), timestamp: " + t + ", series: '"
          + series + "'");
    }
    return reduced;
  }

  /** Counts every histogram of a series as refused because the tenant may not store them. */
  public static void refuseDisabled(int histograms, String series, PushErrors errors) {
    errors.addHistograms(DISABLED_REASON, histograms, "native histogram ingestion is disabled for this tenant"
        + " (-ingester.native-histograms-ingestion-enabled), series: '" + series + "'");
  }
}
