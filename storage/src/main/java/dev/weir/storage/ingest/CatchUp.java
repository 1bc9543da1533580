package dev.weir.storage.ingest;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up catch-up, Mimir's way: a round reads up to the end offset seen when it began; when
 * the round took no longer than {@code max-consumer-lag-at-startup} the reader is caught up,
 * otherwise another round starts at the new end. Logs progress every
 * {@value #PROGRESS_LOG_MILLIS} ms meanwhile.
 *
 * <p>Used by the reader thread only.
 */
final class CatchUp {
  private static final Logger log = LoggerFactory.getLogger(CatchUp.class);
  private static final long PROGRESS_LOG_MILLIS = 5_000;

  private final int partition;
  private final long maxLagMillis;
  private final LongSupplier clock;
  private long roundStart;
  private long roundTarget;
  private long lastLog;
  private long appliedAtLastLog;

  CatchUp(int partition, Duration maxLagAtStartup, LongSupplier clock) {
    this.partition = partition;
    this.maxLagMillis = maxLagAtStartup.toMillis();
    this.clock = clock;
  }

  /** Whether no catch-up is wanted at all ({@code max-consumer-lag-at-startup=0}). */
  boolean disabled() {
    return maxLagMillis == 0;
  }

  /** Starts a round that must reach {@code target}; {@code applied} is where the reader is. */
  void startRound(long target, long applied) {
    long now = clock.getAsLong();
    roundStart = now;
    roundTarget = target;
    if (lastLog == 0) {
      lastLog = now;
      appliedAtLastLog = applied;
    }
  }

  long target() {
    return roundTarget;
  }

  /**
   * Whether the round is over: {@code DONE} when it reached its target in time, {@code NEXT_ROUND}
   * when it reached it too late (the caller starts another one at the new end), else {@code ON}.
   */
  Outcome check(long applied) {
    if (applied < roundTarget) {
      return Outcome.ON;
    }
    if (clock.getAsLong() - roundStart <= maxLagMillis) {
      return Outcome.DONE;
    }
    log.info("msg=\"catch-up round done but took longer than the allowed lag; another round\" partition={}",
        partition);
    return Outcome.NEXT_ROUND;
  }

  enum Outcome { ON, DONE, NEXT_ROUND }

  /** Logs the progress when due. */
  void logProgress(long applied, long end, double lagSeconds) {
    long now = clock.getAsLong();
    if (now - lastLog < PROGRESS_LOG_MILLIS) {
      return;
    }
    double secs = (now - lastLog) / 1000.0;
    double rate = (applied - appliedAtLastLog) / secs;
    long behind = Math.max(0, end - applied);
    log.info("msg=\"catching up\" partition={} records_behind={} seconds_behind={} records_per_s={} eta_s={}",
        partition, behind, String.format("%.1f", lagSeconds), String.format("%.0f", rate),
        rate > 0 ? String.format("%.0f", behind / rate) : "unknown");
    lastLog = now;
    appliedAtLastLog = applied;
  }
}
