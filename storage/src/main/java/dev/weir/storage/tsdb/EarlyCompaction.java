package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.wal.WalCorruptionException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Early head compaction (Mimir's {@code early-head-compaction-*}): when the heads of all tenants
 * hold more series than a threshold, or their memory estimate passes a budget, the heads that
 * would shrink enough are compacted up to the oldest time they still accept in order
 * ({@link TenantDb#compactEarly()}), instead of holding up to 1.5 block ranges until the range is
 * complete. A catch-up of a backlog with series churn (or a long backlog) then stays inside the
 * budget where it would otherwise run the JVM out of memory, crash and replay again.
 *
 * <p>Unlike Mimir, which cuts at the wall clock minus the active-series idle timeout, the cut is
 * the head's own out-of-bounds limit (newest sample minus half a block range), so no sample the
 * head would have accepted is refused afterwards, in a catch-up of old data too. What is younger
 * than that limit cannot be freed: a backlog whose series all arrive within half a block range is
 * bounded only by the series limits. That case is logged and counted as skipped.
 *
 * <p>Runs on the storage's background thread (never beside a normal compaction).
 */
public final class EarlyCompaction {
  private static final Logger log = LoggerFactory.getLogger(EarlyCompaction.class);
  /**
   * A head that frees less than the minimum reduction is compacted (to get back under a
   * threshold) at most this often, so that a threshold just below the steady state does not
   * write a tiny block at every check.
   */
  static final long SMALL_GAIN_INTERVAL_NANOS = 60_000_000_000L;
  /** While nothing can be compacted, the warning is logged at most this often. */
  private static final long SKIP_LOG_INTERVAL_NANOS = 60_000_000_000L;

  private final Config config;
  private final TsdbMetrics metrics;
  private final java.util.Map<String, Long> lastSmallGain = new java.util.HashMap<>();
  private long lastSkipLog = System.nanoTime() - SKIP_LOG_INTERVAL_NANOS;

  EarlyCompaction(Config config, TsdbMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
  }

  Config config() {
    return config;
  }

  /**
   * @param minInMemorySeries series in all heads at which early compaction runs; 0: no series trigger
   * @param memoryBudgetBytes head memory estimate at which it runs; 0: no memory trigger
   * @param minReductionPercent a head is compacted only when that frees at least this share of its
   *     series or of its estimated bytes (and the heads together at least this share), unless it
   *     is needed to get back under the threshold
   * @param checkInterval how often the heads are measured against the thresholds
   */
  public record Config(long minInMemorySeries, long memoryBudgetBytes, int minReductionPercent,
      Duration checkInterval) {
    public static final Config OFF = new Config(0, 0, 15, Duration.ofSeconds(5));

    public boolean enabled() {
      return minInMemorySeries > 0 || memoryBudgetBytes > 0;
    }
  }

  /** One tenant's estimated gain. */
  private record Candidate(TenantDb db, int series, long bytes, int removableSeries, long freeableBytes) {
    /** The gain in percent by the measure of each threshold passed: series, estimated bytes. */
    int percent(boolean bySeries, boolean byBytes) {
      int s = !bySeries || series == 0 ? 0 : (int) (100L * removableSeries / series);
      int b = !byBytes || bytes == 0 ? 0 : (int) (100L * freeableBytes / bytes);
      return Math.max(s, b);
    }
  }

  /**
   * Measures the heads and, when over a threshold, compacts the heads worth it. Failures of one
   * tenant are logged and counted; the others still run.
   */
  int run(Collection<TenantDb> tenants, java.util.function.BooleanSupplier closing) {
    if (!config.enabled()) {
      return 0;
    }
    List<TenantDb> dbs = List.copyOf(tenants);
    // Cheap first: the series count is a field; the memory estimate walks every series.
    long series = 0;
    for (TenantDb db : dbs) {
      series += db.head().numSeries();
    }
    boolean overSeries = config.minInMemorySeries() > 0 && series >= config.minInMemorySeries();
    boolean measure = overSeries || config.memoryBudgetBytes() > 0;
    long[] perTenant = new long[dbs.size()];
    long bytes = 0;
    for (int i = 0; i < dbs.size(); i++) {
      perTenant[i] = measure ? dbs.get(i).head().memoryBytesEstimate() : 0;
      bytes += perTenant[i];
    }
    boolean overBytes = config.memoryBudgetBytes() > 0 && bytes >= config.memoryBudgetBytes();
    if (!overSeries && !overBytes) {
      return 0;
    }
    List<Candidate> candidates = new ArrayList<>();
    for (int i = 0; i < dbs.size(); i++) {
      TenantDb db = dbs.get(i);
      int n = db.head().numSeries();
      if (n > 0) {
        TenantHead.TruncateEstimate e = db.head().truncateEstimate(db.earlyCompactionTime());
        candidates.add(new Candidate(db, n, perTenant[i], e.series(), e.bytes()));
      }
    }
    long removable = candidates.stream().mapToLong(Candidate::removableSeries).sum();
    long freeable = candidates.stream().mapToLong(Candidate::freeableBytes).sum();
    int pct = config.minReductionPercent(); // 0 (tests only: the flag takes 1 to 100) compacts at every check
    // Each threshold by its own measure: series leave for the series threshold, bytes for the budget.
    boolean worth = (overSeries && 100 * removable >= (long) pct * Math.max(series, 1))
        || (overBytes && 100 * freeable >= (long) pct * Math.max(bytes, 1));
    long now = System.nanoTime();
    if (!worth) {
      metrics.earlyCompactionsSkipped.increment();
      if (now - lastSkipLog >= SKIP_LOG_INTERVAL_NANOS) {
        lastSkipLog = now;
        log.warn("msg=\"heads over the early compaction threshold, but none can be compacted early enough to"
            + " matter: what they hold is younger than the out-of-bounds limit (newest sample minus half a block"
            + " range); only series limits bound it now\" in_memory_series={} series_threshold={}"
            + " head_memory_estimate_bytes={} memory_budget_bytes={} estimated_removable_series={}"
            + " estimated_freeable_bytes={} min_reduction_percent={}", series, config.minInMemorySeries(), bytes,
            config.memoryBudgetBytes(), removable, freeable, pct);
      }
      return 0;
    }
    log.info("msg=\"heads over the early compaction threshold\" in_memory_series={} series_threshold={}"
        + " head_memory_estimate_bytes={} memory_budget_bytes={} estimated_removable_series={}"
        + " estimated_freeable_bytes={}", series, config.minInMemorySeries(), bytes, config.memoryBudgetBytes(),
        removable, freeable);
    // Largest gain first: those needed to get under the thresholds (when the heads together gain
    // enough, a tenant below the minimum too, at most once a minute), and every one worth it by itself.
    candidates.sort(overBytes ? Comparator.comparingLong(Candidate::freeableBytes).reversed()
        : Comparator.comparingInt(Candidate::removableSeries).reversed());
    lastSmallGain.keySet().retainAll(dbs.stream().map(TenantDb::tenant).toList());
    long seriesLeft = series;
    long bytesLeft = bytes;
    int compacted = 0;
    int removed = 0;
    for (Candidate c : candidates) {
      if (closing.getAsBoolean()) {
        break;
      }
      boolean needed = (overSeries && seriesLeft >= config.minInMemorySeries())
          || (overBytes && bytesLeft >= config.memoryBudgetBytes());
      boolean small = c.percent(overSeries, overBytes) < pct;
      Long last = lastSmallGain.get(c.db().tenant());
      if ((small && (!needed || (last != null && now - last < SMALL_GAIN_INTERVAL_NANOS)))
          || (c.removableSeries() == 0 && c.freeableBytes() == 0)) {
        continue;
      }
      if (small) {
        lastSmallGain.put(c.db().tenant(), now);
      }
      try {
        TenantDb.EarlyResult r = c.db().compactEarly();
        if (r.blocks() > 0) {
          compacted++;
          removed += r.removedSeries();
          metrics.earlyCompactions.increment();
          metrics.earlyCompactionRemovedSeries.increment(r.removedSeries());
        }
      } catch (IOException | WalCorruptionException | RuntimeException e) {
        metrics.compactionsFailed.increment();
        log.error("msg=\"early head compaction failed, retrying at the next check\" user={} err=\"{}\"",
            c.db().tenant(), e.toString());
      }
      seriesLeft -= c.removableSeries();
      bytesLeft -= c.freeableBytes();
    }
    if (compacted > 0) {
      long after = dbs.stream().mapToLong(d -> d.head().numSeries()).sum();
      log.info("msg=\"heads compacted early to reduce memory\" tenants={} before_in_memory_series={}"
          + " after_in_memory_series={} removed_series={}", compacted, series, after, removed);
    }
    return compacted;
  }
}
