package dev.weir.storage.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;

/** Metrics of the Kafka writer. Thread-safe. */
public final class WriterMetrics {
  final Counter records;
  final Counter bytes;
  final Counter failures;
  final Timer latency;

  public WriterMetrics(MeterRegistry r) {
    records = Counter.builder("weir.ingest.storage.writer.produced.records")
        .description("Records acknowledged by Kafka.").register(r);
    bytes = Counter.builder("weir.ingest.storage.writer.produced.bytes")
        .description("Record value bytes acknowledged by Kafka.").register(r);
    failures = Counter.builder("weir.ingest.storage.writer.failures")
        .description("Writes that failed (the push got a server error and is retried by its client).").register(r);
    latency = Timer.builder("weir.ingest.storage.writer.latency")
        .description("Time from producing a request's records to all being acknowledged.")
        .serviceLevelObjectives(Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
            Duration.ofSeconds(1), Duration.ofSeconds(5))
        .register(r);
  }

  public static WriterMetrics noop() {
    return new WriterMetrics(new SimpleMeterRegistry());
  }
}
