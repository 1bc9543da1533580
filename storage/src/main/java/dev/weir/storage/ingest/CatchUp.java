package dev.weir.storage.ingest;

import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.progress.ProgressReporter;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up catch-up, Mimir's way: a round reads up to the end offset seen when it began; when
 * the round took no longer than {@code max-consumer-lag-at-startup} the reader is caught up,
 * otherwise another round starts at the new end. Reports progress meanwhile (records since the
 * start of the first round out of those up to the end offset seen) through a {@link
 * ProgressReporter}: log lines at the board's interval, and the ring pages.
 *
 * <p>Used by the reader thread only.
 */
final class CatchUp {
  private static final Logger log = LoggerFactory.getLogger(CatchUp.class);

  private final int partition;
  private final long maxLagMillis;
  private final LongSupplier clock;
  private long roundStart;
  private long roundTarget;
  private final ProgressBoard board;
  private @Nullable ProgressReporter progress;
  /** Where the first round started: progress counts records from here. */
  private long base;

  CatchUp(int partition, Duration maxLagAtStartup, LongSupplier clock) {
    this(partition, maxLagAtStartup, clock, ProgressBoard.standard());
  }

  CatchUp(int partition, Duration maxLagAtStartup, LongSupplier clock, ProgressBoard board) {
    this.partition = partition;
    this.maxLagMillis = maxLagAtStartup.toMillis();
    this.clock = clock;
    this.board = board;
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
    if (disabled()) {
      return;
    }
    ProgressReporter p = progress;
    if (p == null) {
      base = applied;
      progress = board.begin(log, "catch-up", "partition=" + partition, "records", Math.max(0, target - applied));
    } else {
      p.total(Math.max(0, target - base));
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
      ProgressReporter p = progress;
      if (p != null) {
        p.update(applied - base);
        p.finish();
      }
      return Outcome.DONE;
    }
    log.info("msg=\"catch-up round done but took longer than the allowed lag; another round\" partition={}",
        partition);
    return Outcome.NEXT_ROUND;
  }

  enum Outcome { ON, DONE, NEXT_ROUND }

  /** Reports how far the reader got; {@code end} is the partition's end offset as last seen. */
  void logProgress(long applied, long end) {
    ProgressReporter p = progress;
    if (p == null) {
      return;
    }
    if (end >= 0) {
      p.total(Math.max(0, Math.max(end, roundTarget) - base));
    }
    p.update(Math.max(0, applied - base));
  }
}
