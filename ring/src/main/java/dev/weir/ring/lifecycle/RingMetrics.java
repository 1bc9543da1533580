package dev.weir.ring.lifecycle;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** Metrics of ring clients and lifecyclers, tagged by ring name. Thread-safe. */
public final class RingMetrics {
  final MeterRegistry registry;

  public RingMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  public static RingMetrics noop() {
    return new RingMetrics(new SimpleMeterRegistry());
  }

  Counter heartbeatFailures(String ring) {
    return Counter.builder("weir.ring.heartbeat.failures")
        .description("Heartbeats (ring updates by the lifecycler) that failed; retried next period.")
        .tag("ring", ring).register(registry);
  }

  Counter heartbeats(String ring) {
    return Counter.builder("weir.ring.heartbeats")
        .description("Successful heartbeats (ring updates by the lifecycler).").tag("ring", ring).register(registry);
  }

  Counter updates(String ring) {
    return Counter.builder("weir.ring.client.updates")
        .description("Ring versions received from the KV store by the watching client.").tag("ring", ring)
        .register(registry);
  }
}
