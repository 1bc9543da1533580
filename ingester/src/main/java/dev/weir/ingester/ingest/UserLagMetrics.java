package dev.weir.ingester.ingest;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.Tsdb;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-tenant freshness gauges of an ingester in Kafka mode ({@code --ingester.user-lag-metrics-enabled},
 * off by default): for each tenant with series in this ingester's head, {@code
 * weir_ingester_user_lag_seconds{user,partition}} (now minus the partition's consumed-up-to time,
 * -1 unknown) and {@code weir_ingester_user_newest_sample_timestamp_seconds{user}}. At most
 * {@code --ingester.user-lag-metrics-max-tenants} tenants are exported — those seen first keep
 * their place, so series do not flap — and the others are counted in {@code
 * weir_ingester_user_lag_metrics_tenants_not_exported}. The tenant list is refreshed every
 * {@value #REFRESH_SECONDS} s on the thread {@code user-lag-metrics}; gauges of tenants gone from
 * the head are removed.
 *
 * <p>Thread-safe; {@link #refresh()} runs on one thread.
 */
public final class UserLagMetrics implements Service {
  private static final Logger log = LoggerFactory.getLogger(UserLagMetrics.class);
  /** How often new and gone tenants are noticed; the values themselves are read at scrape time. */
  static final long REFRESH_SECONDS = 15;

  private final MeterRegistry registry;
  private final Tsdb tsdb;
  private final Supplier<List<PartitionFreshness>> freshness;
  private final int maxTenants;
  private final LongSupplier clock;
  private final Map<String, List<Meter>> exported = new LinkedHashMap<>();
  private final AtomicInteger notExported = new AtomicInteger();
  private @Nullable ScheduledExecutorService executor;

  public UserLagMetrics(MeterRegistry registry, Tsdb tsdb, Supplier<List<PartitionFreshness>> freshness,
      int maxTenants, LongSupplier clock) {
    this.registry = registry;
    this.tsdb = tsdb;
    this.freshness = freshness;
    this.maxTenants = maxTenants;
    this.clock = clock;
    Gauge.builder("weir.ingester.user.lag.metrics.tenants.not.exported", notExported, AtomicInteger::get)
        .description("Tenants with series here whose per-tenant lag gauges are not exported: over"
            + " --ingester.user-lag-metrics-max-tenants.").register(registry);
  }

  @Override
  public String name() {
    return "user-lag-metrics";
  }

  @Override
  public void start() {
    executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "user-lag-metrics");
      t.setDaemon(true);
      return t;
    });
    executor.scheduleWithFixedDelay(() -> {
      try {
        refresh();
      } catch (RuntimeException e) {
        log.warn("msg=\"refreshing the per-tenant lag gauges failed\" err=\"{}\"", e.toString());
      }
    }, 0, REFRESH_SECONDS, TimeUnit.SECONDS);
  }

  /** Registers gauges for new tenants (up to the maximum) and removes those of tenants gone. */
  synchronized void refresh() {
    List<String> present = new ArrayList<>();
    for (String tenant : tsdb.tenants()) {
      TenantDb db = tsdb.existing(tenant);
      if (db != null && db.head().numSeries() > 0) {
        present.add(tenant);
      }
    }
    Set<String> now = new HashSet<>(present);
    for (var it = exported.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (!now.contains(e.getKey())) {
        e.getValue().forEach(registry::remove);
        it.remove();
      }
    }
    int skipped = 0;
    for (String tenant : present) {
      if (exported.containsKey(tenant)) {
        continue;
      }
      if (exported.size() >= maxTenants) {
        skipped++;
        continue;
      }
      exported.put(tenant, register(tenant));
    }
    notExported.set(skipped);
  }

  private List<Meter> register(String tenant) {
    List<Meter> meters = new ArrayList<>();
    for (PartitionFreshness f : freshness.get()) {
      int partition = f.partition();
      meters.add(Gauge.builder("weir.ingester.user.lag.seconds", () -> lagSeconds(partition))
          .description("Seconds since the partition holding the tenant's series here was last consumed up to"
              + " (now minus its consumed-up-to time, see /api/v1/user_lag); -1 unknown.")
          .tag("user", tenant).tag("partition", String.valueOf(partition)).register(registry));
    }
    meters.add(Gauge.builder("weir.ingester.user.newest.sample.timestamp.seconds", () -> newestSample(tenant))
        .description("Timestamp of the newest sample appended for the tenant here; -1 none.")
        .tag("user", tenant).register(registry));
    return meters;
  }

  private double lagSeconds(int partition) {
    for (PartitionFreshness f : freshness.get()) {
      if (f.partition() == partition) {
        return f.lagSeconds(clock.getAsLong());
      }
    }
    return -1;
  }

  private double newestSample(String tenant) {
    TenantDb db = tsdb.existing(tenant);
    if (db == null || db.head().maxTime() == Long.MIN_VALUE) {
      return -1;
    }
    return db.head().maxTime() / 1000.0;
  }

  @Override
  public synchronized void stop() {
    ScheduledExecutorService e = executor;
    if (e != null) {
      e.shutdownNow();
    }
    exported.values().forEach(ms -> ms.forEach(registry::remove));
    exported.clear();
  }
}
