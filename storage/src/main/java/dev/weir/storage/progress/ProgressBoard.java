package dev.weir.storage.progress;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Where a process' long phases report: makes {@link ProgressReporter}s that log at the
 * configured interval ({@code --log.progress-interval}, 10 s by default; 0 logs every update)
 * and keeps the latest reporter of each phase and context, so a status page (the ring pages)
 * shows what the instance is doing now and how the last phase ended.
 *
 * <p>Thread-safe. Holds at most {@value #KEPT} reporters (the oldest is dropped).
 */
public final class ProgressBoard {
  /** The default log interval: often enough to watch, rare enough for a log kept for days. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
  /** Phases kept for status pages: one per phase and partition, a few partitions per process. */
  static final int KEPT = 16;

  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private final LinkedHashMap<String, ProgressReporter> latest = new LinkedHashMap<>();

  /**
   * @param interval between two progress lines of one phase; zero logs every update
   * @param nanoClock monotonic nanoseconds ({@code System::nanoTime}; a manual one in tests)
   */
  public ProgressBoard(Duration interval, LongSupplier nanoClock) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("progress log interval must not be negative: " + interval);
    }
    this.intervalNanos = interval.toNanos();
    this.nanoClock = nanoClock;
  }

  /** A board with the default interval and the system clock, for components used on their own. */
  public static ProgressBoard standard() {
    return new ProgressBoard(DEFAULT_INTERVAL, System::nanoTime);
  }

  /**
   * Begins a phase (logging its first line); it replaces the last one of the same phase and context.
   *
   * @param log the component's logger, so the lines carry its name
   * @param phase what is going on, e.g. "WAL replay", "catch-up", "block-builder cycle"
   * @param context key=value pairs naming where, e.g. "partition=3", or empty
   * @param unit what is counted, e.g. "bytes", "records"
   * @param total how much there is to do (updatable)
   */
  public ProgressReporter begin(Logger log, String phase, String context, String unit, long total) {
    ProgressReporter r = new ProgressReporter(phase, context, unit, total, log, intervalNanos, nanoClock);
    synchronized (latest) {
      String key = phase + "\u0000" + context;
      latest.remove(key);
      latest.put(key, r);
      while (latest.size() > KEPT) {
        latest.remove(latest.keySet().iterator().next());
      }
    }
    return r;
  }

  /** The latest reporter of each phase and context, oldest first. */
  public List<ProgressReporter.Snapshot> snapshots() {
    List<ProgressReporter> rs;
    synchronized (latest) {
      rs = new ArrayList<>(latest.values());
    }
    List<ProgressReporter.Snapshot> out = new ArrayList<>();
    for (ProgressReporter r : rs) {
      out.add(r.snapshot());
    }
    return out;
  }
}
