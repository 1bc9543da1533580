package dev.weir.ring.kv;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.ConcurrentHashMap;

/** KV store request outcomes and CAS conflicts. Thread-safe. */
public final class KvMetrics {
  private final MeterRegistry registry;
  private final ConcurrentHashMap<String, Counter> requests = new ConcurrentHashMap<>();
  final Counter casConflicts;

  public KvMetrics(MeterRegistry registry) {
    this.registry = registry;
    casConflicts = Counter.builder("weir.kv.cas.conflicts")
        .description("CAS attempts that lost to a concurrent writer and were retried.").register(registry);
  }

  public static KvMetrics noop() {
    return new KvMetrics(new SimpleMeterRegistry());
  }

  void request(String operation, boolean ok) {
    String status = ok ? "success" : "error";
    requests.computeIfAbsent(operation + '/' + status, k -> Counter.builder("weir.kv.requests")
        .description("KV store requests by operation and outcome.")
        .tag("operation", operation).tag("status", status).register(registry)).increment();
  }
}
