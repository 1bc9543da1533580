package dev.weir.ingester.push;

import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.wire.WireBatch;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Applies the per-tenant ingestion rate limit (a token bucket of samples, refilled at
 * {@code ingestion_rate} per second up to {@code ingestion_burst_size}) before a push is handled.
 * A push that does not fit is refused whole with 429 ({@code rate_limited}), so the client backs
 * off and retries; nothing of it is stored. The bucket's rate is the {@link IngestionRateStrategy}'s
 * share of the limit (the whole limit per process, or a fraction of a fleet-wide one); a change of
 * that share (a distributor joined or left) applies from the next push on.
 *
 * <p>Thread-safe.
 */
public final class RateLimitedPush implements PushHandler {
  private final PushHandler next;
  private final Function<String, Limits> limits;
  private final IngesterMetrics metrics;
  private final LongSupplier nanoClock;
  private final IngestionRateStrategy strategy;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  /** The {@link IngestionRateStrategy#local() local} strategy. */
  public RateLimitedPush(PushHandler next, Function<String, Limits> limits, IngesterMetrics metrics,
      LongSupplier nanoClock) {
    this(next, limits, metrics, nanoClock, IngestionRateStrategy.local());
  }

  public RateLimitedPush(PushHandler next, Function<String, Limits> limits, IngesterMetrics metrics,
      LongSupplier nanoClock, IngestionRateStrategy strategy) {
    this.next = next;
    this.limits = limits;
    this.metrics = metrics;
    this.nanoClock = nanoClock;
    this.strategy = strategy;
  }

  private static final class Bucket {
    double tokens = Double.NaN;
    long last;
  }

  @Override
  public void push(String tenant, WriteRequest request) {
    long samples = 0;
    if (limits.apply(tenant).ingestionRate() > 0) {
      for (TimeSeries ts : request.getTimeseriesList()) {
        samples += ts.getSamplesCount() + ts.getHistogramsCount();
      }
    }
    admit(tenant, samples);
    next.push(tenant, request);
  }

  @Override
  public void push(String tenant, WireBatch request) {
    admit(tenant, request.samples());
    next.push(tenant, request);
  }

  private void admit(String tenant, long samplesLong) {
    Limits l = limits.apply(tenant);
    if (l.ingestionRate() > 0) {
      int samples = (int) Math.min(Integer.MAX_VALUE, samplesLong);
      if (!take(tenant, strategy.rate(l), l, samples)) {
        metrics.discarded(tenant, "rate_limited", samples);
        throw new ClientErrorException("rate_limited", "the request has been rejected because the tenant exceeded"
            + " its ingestion rate limit of " + strategy.describe(l) + " with burst " + l.ingestionBurstSize()
            + " (" + samples + " samples in this request); retry later", 429);
      }
    }
  }

  private boolean take(String tenant, double rate, Limits l, int samples) {
    Bucket b = buckets.computeIfAbsent(tenant, t -> new Bucket());
    synchronized (b) {
      long now = nanoClock.getAsLong();
      if (Double.isNaN(b.tokens)) {
        b.tokens = l.ingestionBurstSize();
      } else {
        b.tokens = Math.min(l.ingestionBurstSize(), b.tokens + (now - b.last) / 1e9 * rate);
      }
      b.last = now;
      if (samples > b.tokens) {
        return false;
      }
      b.tokens -= samples;
      return true;
    }
  }
}
