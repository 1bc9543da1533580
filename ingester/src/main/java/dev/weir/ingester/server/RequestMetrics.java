package dev.weir.ingester.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Request duration histogram shared by the HTTP and gRPC servers, shaped like Mimir's
 * {@code cortex_request_duration_seconds}: {@code method} is the HTTP verb or {@code gRPC},
 * {@code route} the route name or full gRPC method, {@code status_code} the HTTP status or gRPC
 * code. Also the connections the servers close on their own: refused over the connection limit,
 * and HTTP connections closed after the idle or read timeout.
 *
 * <p>Thread-safe.
 */
public final class RequestMetrics {
  static final String NAME = "weir.request.duration";
  private static final Duration[] BUCKETS = {
    Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
    Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
    Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
    Duration.ofSeconds(30), Duration.ofSeconds(60)
  };

  private final MeterRegistry registry;
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

  public RequestMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  public void record(String method, String route, String status, long nanos) {
    String key = method + '\u0000' + route + '\u0000' + status;
    Timer t = timers.computeIfAbsent(key, k -> Timer.builder(NAME)
        .description("Time (in seconds) spent serving HTTP and gRPC requests.")
        .tag("method", method)
        .tag("route", route)
        .tag("status_code", status)
        .serviceLevelObjectives(BUCKETS)
        .register(registry));
    t.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** A connection closed when accepted because {@code server} ("http" or "grpc") had its limit open. */
  public void connectionRefused(String server) {
    registry.counter("weir.server.connections.refused", "server", server).increment();
  }

  /** An HTTP connection closed after its "idle" or "read" timeout. */
  public void connectionTimedOut(String timeout) {
    registry.counter("weir.http.connections.timed.out", "timeout", timeout).increment();
  }
}
