package dev.weir.ingester.push;

import dev.weir.ingester.logging.RateLimitedLog;
import org.jspecify.annotations.Nullable;

/**
 * Collects the client errors of one request: counts every refused sample under its reason and
 * keeps the first message, then {@link #throwIfAny()} reports it once the valid part is stored.
 *
 * <p>Not thread-safe: one per request.
 */
public final class PushErrors {
  private final String tenant;
  private final IngesterMetrics metrics;
  private final RateLimitedLog log;
  private @Nullable String first;
  private @Nullable String firstReason;
  private int count;
  private long refused;
  private long refusedHistograms;

  public PushErrors(String tenant, IngesterMetrics metrics, RateLimitedLog log) {
    this.tenant = tenant;
    this.metrics = metrics;
    this.log = log;
  }

  public void add(String reason, int samples, String message) {
    metrics.discarded(tenant, reason, samples);
    refusedElsewhere(reason, samples, message);
  }

  /** A refused series: its float {@code samples} and {@code histograms} samples, counted together under the reason. */
  public void addSeries(String reason, int samples, int histograms, String message) {
    refusedHistograms += histograms;
    add(reason, samples + histograms, message);
  }

  /** {@link #add} for refused native histogram samples (counted apart for the RW2 response headers). */
  public void addHistograms(String reason, int histograms, String message) {
    refusedHistograms += histograms;
    add(reason, histograms, message);
  }

  /** {@link #refusedElsewhere} for histogram samples, of which the other side told how many it refused. */
  public void histogramsRefusedElsewhere(long histograms) {
    refusedHistograms += histograms;
  }

  /** Refused exemplars: counted by reason, reported like a refused sample (no sample is refused). */
  public void exemplars(String reason, int exemplars, String message) {
    metrics.discardedExemplars(tenant, reason, exemplars);
    refusedElsewhere(reason, 0, message);
  }

  /**
   * An error whose {@code samples} were counted by reason where they were refused (an ingester
   * behind this distributor): reported and included in {@link PartialWriteException#refused()},
   * not counted again.
   */
  public void refusedElsewhere(String reason, long samples, String message) {
    refused += samples;
    if (first == null) {
      first = message;
      firstReason = reason;
    }
    count++;
  }

  public boolean any() {
    return first != null;
  }

  /**
   * Throws the first error (with how many more there were), if any, as a {@link
   * PartialWriteException} with the refused sample count.
   */
  public void throwIfAny() {
    if (first == null || firstReason == null) {
      return;
    }
    String msg = count > 1 ? first + " (and " + (count - 1) + " more errors in this request)" : first;
    log.warn("msg=\"push rejected in part\" user=" + tenant + " reason=" + firstReason + " errors=" + count
        + " first=\"" + first.replace("\"", "'") + "\"");
    throw new PartialWriteException(firstReason, msg, refused, refusedHistograms);
  }
}
