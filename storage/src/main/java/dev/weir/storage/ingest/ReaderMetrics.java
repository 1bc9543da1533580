package dev.weir.storage.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * Metrics of one partition reader, all tagged {@code partition}. Offsets follow Kafka's
 * convention (committed = next offset to read); -1 where nothing is known yet.
 *
 * <p>Thread-safe.
 */
public final class ReaderMetrics {
  private final MeterRegistry registry;
  private final String partition;
  final Counter recordsConsumed;
  final Counter bytesConsumed;
  final Counter recordsOk;
  final Counter recordsClientError;
  final Counter retries;
  final Counter commitFailures;
  final Counter fetchErrors;
  final Counter concurrentlyFetched;
  final Counter missedRecords;
  final Counter kafkaCallErrors;
  final Counter pipelineRestarts;
  final Timer processingLatency;
  final AtomicLong lastCommitted = new AtomicLong(-1);
  final AtomicLong lagRecords = new AtomicLong(-1);
  final AtomicLong lastCommitMillis = new AtomicLong(-1);
  private final ConcurrentHashMap<String, Counter> clientErrors = new ConcurrentHashMap<>();

  public ReaderMetrics(MeterRegistry r, int partition) {
    this.registry = r;
    this.partition = String.valueOf(partition);
    recordsConsumed = counter("weir.ingest.storage.reader.records", "Records fetched from the partition.");
    bytesConsumed = counter("weir.ingest.storage.reader.bytes", "Record bytes fetched from the partition.");
    recordsOk = Counter.builder("weir.ingest.storage.reader.records.processed")
        .description("Records processed, by outcome: ok (appended; some samples may have been refused, see the"
            + " client-errors counter), or client_error (undecodable: skipped whole).")
        .tag("partition", this.partition).tag("outcome", "ok").register(r);
    recordsClientError = Counter.builder("weir.ingest.storage.reader.records.processed")
        .description("Records processed, by outcome: ok (appended; some samples may have been refused, see the"
            + " client-errors counter), or client_error (undecodable: skipped whole).")
        .tag("partition", this.partition).tag("outcome", "client_error").register(r);
    retries = counter("weir.ingest.storage.reader.retries",
        "Appends retried after a server error (the partition is held meanwhile).");
    commitFailures = counter("weir.ingest.storage.reader.offset.commit.failures",
        "Offset commits (or the WAL sync before them) that failed; retried next interval.");
    fetchErrors = counter("weir.ingest.storage.reader.fetch.errors", "Fetches that failed and were retried.");
    concurrentlyFetched = counter("weir.ingest.storage.reader.concurrent.fetch.records",
        "Records fetched by concurrent fetchers (fetch-concurrency-max) during start-up catch-up.");
    missedRecords = counter("weir.ingest.storage.reader.missed.records",
        "Records skipped by a gap in offsets (or deleted by retention before they were read).");
    kafkaCallErrors = counter("weir.ingest.storage.reader.kafka.call.errors",
        "Kafka calls of the reader (committed, list offsets, partitions) that failed and were retried with backoff.");
    pipelineRestarts = counter("weir.ingest.storage.reader.restarts",
        "Times the reader rebuilt its consumer and pipeline after an unexpected failure, resuming from the last"
            + " applied offset.");
    processingLatency = Timer.builder("weir.ingest.storage.reader.processing.latency")
        .description("Time from a record's timestamp to its samples being appended.")
        .serviceLevelObjectives(Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(5))
        .tag("partition", this.partition).register(r);
    Gauge.builder("weir.ingest.storage.reader.last.committed.offset", lastCommitted, AtomicLong::get)
        .description("The committed offset (next offset to read), as kafka-consumer-groups shows it; -1 before"
            + " the first commit.").tag("partition", this.partition).register(r);
    Gauge.builder("weir.ingest.storage.reader.lag.records", lagRecords, AtomicLong::get)
        .description("Records between the partition's end and the last record appended; -1 when unknown.")
        .tag("partition", this.partition).register(r);
    Gauge.builder("weir.ingest.storage.reader.last.commit.timestamp.seconds", lastCommitMillis,
            v -> v.get() < 0 ? -1 : v.get() / 1000.0)
        .description("When the offset was last committed (for \"commits stalled\" alerts).")
        .tag("partition", this.partition).register(r);
  }

  public static ReaderMetrics noop(int partition) {
    return new ReaderMetrics(new SimpleMeterRegistry(), partition);
  }

  private Counter counter(String name, String help) {
    return Counter.builder(name).description(help).tag("partition", partition).register(registry);
  }

  void clientError(String reason) {
    clientErrors.computeIfAbsent(reason, k -> Counter.builder("weir.ingest.storage.reader.client.errors")
        .description("Client errors while reading: undecodable records, and appends whose invalid samples were"
            + " refused (the valid ones stored), by reason.")
        .tag("partition", partition).tag("reason", k).register(registry)).increment();
  }

  /**
   * A fetch position moved by the reader itself: {@code before_log_start} (retention deleted
   * records not yet read), {@code beyond_end} (the partition was truncated or the topic re-created
   * with fewer records), {@code topic_recreated} (a new topic ID under the same name).
   */
  void offsetReset(String reason) {
    Counter.builder("weir.ingest.storage.reader.offset.resets")
        .description("Fetch positions the reader moved because the partition no longer holds them, by reason"
            + " (before_log_start, beyond_end, topic_recreated).")
        .tag("partition", partition).tag("reason", reason).register(registry).increment();
  }

  void gauge(String name, String help, DoubleSupplier value) {
    Gauge.builder(name, value::getAsDouble).description(help).tag("partition", partition).register(registry);
  }

  void blockedGauge(String reason, DoubleSupplier value) {
    Gauge.builder("weir.ingest.storage.reader.blocked", value::getAsDouble)
        .description("1 while the reader cannot make progress for a reason retries will not fix (and /ready fails).")
        .tag("partition", partition).tag("reason", reason).register(registry);
  }

  /** Records between the partition's end and the last record appended; -1 when unknown. */
  public long lagRecords() {
    return lagRecords.get();
  }
}
