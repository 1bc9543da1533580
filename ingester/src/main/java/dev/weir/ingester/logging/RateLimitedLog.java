package dev.weir.ingester.logging;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Logs at most one line per interval and says how many were suppressed in between, so a flood of
 * client errors cannot flood the log.
 *
 * <p>Thread-safe.
 */
public final class RateLimitedLog {
  private final Logger log;
  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  public RateLimitedLog(Logger log, long intervalNanos, LongSupplier nanoClock) {
    this.log = log;
    this.intervalNanos = intervalNanos;
    this.nanoClock = nanoClock;
  }

  /** Logs {@code message} at WARN unless a line was logged within the interval. */
  public void warn(String message) {
    long now = nanoClock.getAsLong();
    long due = next.get();
    if ((due == Long.MIN_VALUE || now - due >= 0) && next.compareAndSet(due, now + intervalNanos)) {
      long skipped = suppressed.getAndSet(0);
      if (skipped > 0) {
        log.warn("{} (and {} similar messages suppressed)", message, skipped);
      } else {
        log.warn(message);
      }
    } else {
      suppressed.incrementAndGet();
    }
  }
}
