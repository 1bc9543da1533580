package dev.weir.storage.ingest.batch;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Metrics of a {@link BatchingConsumer}, named {@code weir_<prefix>_…} (e.g.
 * {@code weir_block_builder_lag_seconds{partition}}). Thread-safe.
 */
public final class BatchMetrics {
  private final MeterRegistry registry;
  private final String prefix;
  private final Map<Integer, PartitionGauges> gauges = new ConcurrentHashMap<>();
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Timer cycleDuration;
  /** Record bytes held by the cycle in progress (0 between cycles); bounded by max-bytes-per-cycle. */
  final AtomicLong bufferedBytes = new AtomicLong();
  /** 1 while Kafka cannot be reached (offsets, fetches or commits fail), else 0. */
  final AtomicLong kafkaUnavailable = new AtomicLong();
  /** 1 while the topic or one of the served partitions does not exist, else 0. */
  final AtomicLong topicMissing = new AtomicLong();

  /** Per-partition values; -1 where nothing is known yet. */
  static final class PartitionGauges {
    final AtomicLong lagRecords = new AtomicLong(-1);
    final AtomicLong lagMillis = new AtomicLong(-1);
    final AtomicLong committed = new AtomicLong(-1);
    final AtomicLong lastCommitMillis = new AtomicLong(-1);
  }

  public BatchMetrics(MeterRegistry registry, String prefix) {
    this.registry = registry;
    this.prefix = "weir." + prefix;
    cycleDuration = Timer.builder(this.prefix + ".cycle.duration")
        .description("Duration of successful cycles: consume, flush and commit.")
        .serviceLevelObjectives(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15),
            Duration.ofSeconds(30), Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5),
            Duration.ofMinutes(10), Duration.ofMinutes(30))
        .register(registry);
    Gauge.builder(this.prefix + ".cycle.buffered.bytes", bufferedBytes, AtomicLong::get)
        .description("Record bytes held in memory by the cycle in progress; at most max-bytes-per-cycle.")
        .register(registry);
    Gauge.builder(this.prefix + ".kafka.unavailable", kafkaUnavailable, AtomicLong::get)
        .description("1 while Kafka cannot be reached (offset, fetch or commit requests fail), else 0.")
        .register(registry);
    Gauge.builder(this.prefix + ".topic.missing", topicMissing, AtomicLong::get)
        .description("1 while the topic or a served partition does not exist, else 0.").register(registry);
  }

  public static BatchMetrics noop() {
    return new BatchMetrics(new SimpleMeterRegistry(), "batch");
  }

  PartitionGauges partition(int p) {
    return gauges.computeIfAbsent(p, k -> {
      PartitionGauges g = new PartitionGauges();
      String tag = String.valueOf(k);
      Gauge.builder(prefix + ".lag.records", g.lagRecords, AtomicLong::get).tag("partition", tag)
          .description("Records between the committed offset and the partition's end; -1 when unknown.")
          .register(registry);
      Gauge.builder(prefix + ".lag.seconds", g.lagMillis, v -> v.get() < 0 ? -1 : v.get() / 1000.0)
          .tag("partition", tag)
          .description("Age of the oldest record not yet committed (now - its record timestamp); 0 when caught up.")
          .register(registry);
      Gauge.builder(prefix + ".last.committed.offset", g.committed, AtomicLong::get).tag("partition", tag)
          .description("The committed offset (next offset to read), as kafka-consumer-groups shows it.")
          .register(registry);
      Gauge.builder(prefix + ".last.commit.timestamp.seconds", g.lastCommitMillis,
              v -> v.get() < 0 ? -1 : v.get() / 1000.0).tag("partition", tag)
          .description("When an offset of the partition was last committed.").register(registry);
      return g;
    });
  }

  Counter counter(String name, String help, String... tags) {
    return counters.computeIfAbsent(name + String.join("\u0000", tags), k -> Counter.builder(prefix + "." + name)
        .description(help).tags(tags).register(registry));
  }

  void cycle(int partition, long records, long bytes, Duration took) {
    cycleDuration.record(took);
    String p = String.valueOf(partition);
    counter("cycles", "Cycles completed (flushed and committed).", "partition", p).increment();
    counter("records", "Records consumed in completed cycles.", "partition", p).increment(records);
    counter("bytes", "Record bytes consumed in completed cycles.", "partition", p).increment(bytes);
  }

  void flushFailure(String kind, boolean retryable) {
    counter("flush.failures", "Failed flushes by kind; retryable ones redo the cycle.", "kind", kind, "retryable",
        String.valueOf(retryable)).increment();
  }

  void skipped(int partition, String reason) {
    counter("records.skipped", "Records that could not be decoded, by reason (sent to the dead-letter topic when"
        + " one is set).", "partition", String.valueOf(partition), "reason", reason).increment();
  }

  void missed(int partition, long n) {
    counter("missed.records", "Records deleted by retention before they were consumed.", "partition",
        String.valueOf(partition)).increment(n);
  }

  void offsetReset(int partition, String reason) {
    counter("offset.reset", "Committed offsets reset to the log start: before_start (records deleted by"
        + " retention before they were consumed) or after_end (the topic was re-created or truncated).",
        "partition", String.valueOf(partition), "reason", reason).increment();
  }

  void commitFailure() {
    counter("offset.commit.failures", "Offset commits that failed and were retried.").increment();
  }
}
