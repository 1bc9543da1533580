package dev.weir.ingester.push;

import dev.weir.storage.tsdb.head.TenantHead;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Metrics of the ingester's write path, named after Mimir's ({@code cortex_} becomes
 * {@code weir_}): samples ingested and discarded by reason, series in memory and active series
 * per tenant.
 *
 * <p>Thread-safe. Meters are created on first use per tenant and reason.
 */
public final class IngesterMetrics {
  private final MeterRegistry registry;
  private final LongSupplier wallClock;
  private final long activeIdleMillis;
  private final ConcurrentHashMap<String, Counter> ingested = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> duplicates = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> outOfOrder = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> discarded = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> received = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Boolean> tenantGauges = new ConcurrentHashMap<>();

  public IngesterMetrics(MeterRegistry registry, LongSupplier wallClock, long activeIdleMillis) {
    this.registry = registry;
    this.wallClock = wallClock;
    this.activeIdleMillis = activeIdleMillis;
  }

  void ingested(String tenant, int n) {
    if (n > 0) {
      ingested.computeIfAbsent(tenant, t -> Counter.builder("weir.ingester.ingested.samples")
          .description("Samples appended to the head.")
          .tag("user", t).register(registry)).increment(n);
    }
  }

  /** Counts samples stored in the out-of-order head (Mimir's {@code out_of_order_samples_appended_total}). */
  void outOfOrder(String tenant, int n) {
    if (n > 0) {
      outOfOrder.computeIfAbsent(tenant, t -> Counter.builder("weir.ingester.out.of.order.samples.appended")
          .description("Samples older than the newest of their series stored within the out-of-order window.")
          .tag("user", t).register(registry)).increment(n);
    }
  }

  void duplicates(String tenant, int n) {
    if (n > 0) {
      duplicates.computeIfAbsent(tenant, t -> Counter.builder("weir.ingester.duplicate.samples")
          .description("Samples already stored (identical to one of their series, or from a Kafka record applied before a restart): accepted, not stored again.")
          .tag("user", t).register(registry)).increment(n);
    }
  }

  /** Counts samples a distributor received (before validation), like Mimir's distributor metric. */
  public void distributorReceived(String tenant, int n) {
    if (n > 0) {
      received.computeIfAbsent(tenant, t -> Counter.builder("weir.distributor.received.samples")
          .description("Samples received by the distributor, before validation.")
          .tag("user", t).register(registry)).increment(n);
    }
  }

  /** Counts samples refused for a client-error reason. */
  public void discarded(String tenant, String reason, int n) {
    if (n > 0) {
      discarded.computeIfAbsent(tenant + '\u0000' + reason, k -> Counter.builder("weir.discarded.samples")
          .description("Samples discarded as client errors, by reason.")
          .tag("reason", reason).tag("user", tenant).register(registry)).increment(n);
    }
  }

  /** Counts exemplars refused for a client-error reason (lazily registered, like the sample counter). */
  public void discardedExemplars(String tenant, String reason, int n) {
    if (n > 0) {
      discarded.computeIfAbsent(tenant + '\u0001' + reason, k -> Counter.builder("weir.discarded.exemplars")
          .description("Exemplars discarded as client errors, by reason.")
          .tag("reason", reason).tag("user", tenant).register(registry)).increment(n);
    }
  }

  /** Counts exemplars stored in the head. */
  public void ingestedExemplars(String tenant, int n) {
    if (n > 0) {
      discarded.computeIfAbsent(tenant + '\u0002', k -> Counter.builder("weir.ingester.ingested.exemplars")
          .description("Exemplars stored in the head (resends of a stored exemplar not counted).")
          .tag("user", tenant).register(registry)).increment(n);
    }
  }

  /** Registers the per-tenant series gauges the first time a tenant writes. */
  void tenantHead(TenantHead head) {
    tenantGauges.computeIfAbsent(head.tenant(), t -> {
      Gauge.builder("weir.ingester.memory.series", head, TenantHead::numSeries)
          .description("Series in the head.")
          .tag("user", t).register(registry);
      Gauge.builder("weir.ingester.exemplars.in.storage", head, h -> h.exemplars().size())
          .description("Exemplars held in the tenant's ring (at most its max_global_exemplars_per_user share).")
          .tag("user", t).register(registry);
      Gauge.builder("weir.ingester.active.series", head,
              h -> h.activeSeries(wallClock.getAsLong() - activeIdleMillis))
          .description("Series that received a sample within the active-series idle timeout.")
          .tag("user", t).register(registry);
      return Boolean.TRUE;
    });
  }
}
