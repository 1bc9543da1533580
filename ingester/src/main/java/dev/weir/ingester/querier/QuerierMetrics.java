package dev.weir.ingester.querier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * Metrics of the querier: calls to sources by kind ({@code ingester}, {@code store-gateway}),
 * method and gRPC status; calls moved to another replica; samples the merge dropped; queries
 * refused by a limit. Thread-safe.
 */
public final class QuerierMetrics {
  private final MeterRegistry registry;
  private final Counter duplicates;
  private final Counter conflicts;

  public QuerierMetrics(MeterRegistry registry) {
    this.registry = registry;
    duplicates = Counter.builder("weir.querier.merged.duplicate.samples")
        .description("Samples several sources returned with the same value; kept once.").register(registry);
    conflicts = Counter.builder("weir.querier.merged.conflicting.samples")
        .description("Samples dropped because a source listed earlier had another value at the same timestamp.")
        .register(registry);
  }

  void sourceCall(String kind, String method, String code, long nanos) {
    Timer.builder("weir.querier.source.request.duration")
        .description("Calls from the querier to one source, by source kind, method and gRPC status code.")
        .tags("kind", kind, "method", method, "status_code", code).register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  void failover(String kind) {
    Counter.builder("weir.querier.source.failovers").description("Calls made again to the next replica (the"
        + " other zone's partition owner, another store-gateway) after one failed with a server error, by kind.")
        .tag("kind", kind).register(registry).increment();
  }

  void merged(long duplicateSamples, long conflictingSamples) {
    duplicates.increment(duplicateSamples);
    conflicts.increment(conflictingSamples);
  }

  void refused(String reason) {
    Counter.builder("weir.querier.refused.queries").description("Queries the querier refused, by reason.")
        .tag("reason", reason).register(registry).increment();
  }
}
