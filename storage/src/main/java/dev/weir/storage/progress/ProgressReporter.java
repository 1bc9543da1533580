package dev.weir.storage.progress;

import java.util.Locale;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Progress of one long phase — a WAL replay, a Kafka catch-up, a block-builder cycle — as done
 * out of total in one unit (bytes, records). Logs a line when the phase begins, then at most once
 * per interval while it is updated (done/total, percent, the rate over the last interval and the
 * time left at that rate), and one line when it is finished; {@link #snapshot()} gives the same
 * numbers to status pages at any time.
 *
 * <p>Example line: {@code msg="WAL replay progress" done=73400320 total=209715200 unit=bytes
 * percent=35.0 rate_per_s=14680064 eta_s=9}.
 *
 * <p>Thread-safe: one thread updates it, any thread may read a snapshot. Made by {@link
 * ProgressBoard#begin}.
 */
public final class ProgressReporter {
  private final String phase;
  private final String context;
  private final String unit;
  private final Logger log;
  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private final long startedNanos;
  private long total;
  private long done;
  private long lastLogNanos;
  private long doneAtLastLog;
  /** Per second over the last logged interval; NaN before the first one. */
  private double rate = Double.NaN;
  private long finishedNanos = -1;

  ProgressReporter(String phase, String context, String unit, long total, Logger log, long intervalNanos,
      LongSupplier nanoClock) {
    this.phase = phase;
    this.context = context;
    this.unit = unit;
    this.total = Math.max(0, total);
    this.log = log;
    this.intervalNanos = intervalNanos;
    this.nanoClock = nanoClock;
    this.startedNanos = nanoClock.getAsLong();
    this.lastLogNanos = startedNanos;
    log.info("msg=\"{} starting\" {}total={} unit={}", phase, prefix(), this.total, unit);
  }

  /** The phase's name, e.g. "WAL replay". */
  public String phase() {
    return phase;
  }

  /** Sets a new total (e.g. the partition's end offset moved on); never below what is done. */
  public synchronized void total(long total) {
    this.total = Math.max(done, Math.max(0, total));
  }

  /** Sets how much is done, logging a line when one is due. */
  public synchronized void update(long done) {
    this.done = done;
    total = Math.max(total, done);   // e.g. a partition read past the end offset last seen
    long now = nanoClock.getAsLong();
    long elapsed = now - lastLogNanos;
    if (elapsed < intervalNanos || finishedNanos >= 0) {
      return;
    }
    if (elapsed > 0) {
      rate = (done - doneAtLastLog) * 1e9 / elapsed;
    }
    lastLogNanos = now;
    doneAtLastLog = done;
    Snapshot s = snapshotAt(now);
    log.info("msg=\"{} progress\" {}done={} total={} unit={} percent={} rate_per_s={} eta_s={}", phase, prefix(),
        s.done(), s.total(), unit, format(s.percent(), 1), format(s.ratePerSecond(), 0),
        s.etaSeconds() < 0 ? "unknown" : String.valueOf(s.etaSeconds()));
  }

  /** Adds to what is done, logging a line when one is due. */
  public synchronized void add(long n) {
    update(done + n);
  }

  /** Ends the phase with one line: what was done, in how long, at what average rate. Idempotent. */
  public synchronized void finish() {
    if (finishedNanos >= 0) {
      return;
    }
    finishedNanos = nanoClock.getAsLong();
    double secs = (finishedNanos - startedNanos) / 1e9;
    log.info("msg=\"{} done\" {}done={} total={} unit={} seconds={} rate_per_s={}", phase, prefix(), done, total,
        unit, format(secs, 2), format(secs > 0 ? done / secs : Double.NaN, 0));
  }

  /** The numbers now. */
  public synchronized Snapshot snapshot() {
    return snapshotAt(finishedNanos >= 0 ? finishedNanos : nanoClock.getAsLong());
  }

  private Snapshot snapshotAt(long now) {
    double secs = (now - startedNanos) / 1e9;
    // The last interval's rate while running (it follows changes); the average once finished or
    // before the first interval is over.
    double r = finishedNanos < 0 && !Double.isNaN(rate) ? rate : secs > 0 ? done / secs : Double.NaN;
    double percent = total > 0 ? Math.min(100.0, done * 100.0 / total) : Double.NaN;
    long left = Math.max(0, total - done);
    long eta = finishedNanos >= 0 ? 0 : r > 0 && total > 0 ? (long) Math.ceil(left / r) : -1;
    return new Snapshot(phase, context, unit, done, total, percent, r, eta, (long) (secs * 1000), finishedNanos >= 0);
  }

  private String prefix() {
    return context.isEmpty() ? "" : context + " ";
  }

  static String format(double v, int decimals) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "unknown" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  /**
   * What a phase has done.
   *
   * @param phase e.g. "WAL replay"
   * @param context e.g. "partition=3", or empty
   * @param unit what {@code done} and {@code total} count, e.g. "bytes"
   * @param percent done out of total in percent, NaN without a total
   * @param ratePerSecond units per second over the last logged interval (the average before the
   *     first one and once finished), NaN when not known yet
   * @param etaSeconds seconds left at that rate, 0 when finished, -1 when not known
   * @param elapsedMillis since the phase began (until it finished)
   * @param finished whether {@link #finish()} was called
   */
  public record Snapshot(String phase, String context, String unit, long done, long total, double percent,
      double ratePerSecond, long etaSeconds, long elapsedMillis, boolean finished) {}
}
