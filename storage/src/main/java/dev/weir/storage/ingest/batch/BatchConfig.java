package dev.weir.storage.ingest.batch;

import dev.weir.storage.ingest.AssignedConsumers;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.KafkaSecurity;
import java.time.Duration;
import java.util.List;

/**
 * Settings of a {@link BatchingConsumer}.
 *
 * @param address Kafka bootstrap servers
 * @param topic the topic read
 * @param clientId Kafka client ID prefix
 * @param consumerGroup the group that stores the committed offsets (nothing else of the group is used)
 * @param partitions the partitions served, round-robin
 * @param consumeInterval a cycle holds records of one aligned span of record time this long
 * @param consumeIntervalBuffer a span is consumed only once this much wall time passed after its end
 * @param maxRecordsPerCycle a cycle ends after this many records (0 = no limit)
 * @param maxBytesPerCycle a cycle ends before the record that would take it past this many record
 *     bytes (0 = no limit)
 * @param cycleTimeout a cycle ends (and flushes what it has) after consuming this long
 * @param lookbackOnNoCommit with no committed offset, start at records this old
 * @param idlePollInterval sleep between rounds in which no partition had work
 * @param retryBackoffMin first backoff after a retryable failure, doubled up to {@code retryBackoffMax}
 * @param retryBackoffMax longest backoff
 * @param deadLetterTopic receives undecodable records; empty counts and skips them
 * @param maxRecordSizeBytes largest record (for the dead-letter producer)
 * @param security SASL and TLS of the clients
 * @param partitionFetchBytes the most one fetch asks of a partition, in batches as stored
 *     ({@link AssignedConsumers#fetchBytesFor}: smaller when the writer compresses, since a poll
 *     decompresses its records)
 */
public record BatchConfig(String address, String topic, String clientId, String consumerGroup,
    List<Integer> partitions, Duration consumeInterval, Duration consumeIntervalBuffer, long maxRecordsPerCycle,
    long maxBytesPerCycle, Duration cycleTimeout, Duration lookbackOnNoCommit, Duration idlePollInterval,
    Duration retryBackoffMin, Duration retryBackoffMax, String deadLetterTopic, int maxRecordSizeBytes,
    KafkaSecurity security, int partitionFetchBytes) {

  /**
   * Record bytes a cycle may hold: the cycle's samples in memory are about as large as the records
   * (16 bytes a sample, each series' labels once), so 256 MiB keeps a block-builder of a few
   * partitions well inside a 2 GiB heap, while an hour of a busy partition still takes few cycles.
   */
  public static final long DEFAULT_MAX_BYTES_PER_CYCLE = 256L << 20;
  /** Records a cycle may hold: bounds the per-record overhead when records are tiny. */
  public static final long DEFAULT_MAX_RECORDS_PER_CYCLE = 1_000_000;

  public BatchConfig {
    partitions = List.copyOf(partitions);
    if (partitions.isEmpty()) {
      throw new IllegalArgumentException("a batching consumer needs at least one partition");
    }
    if (consumeInterval.toMillis() <= 0) {
      throw new IllegalArgumentException("consume interval must be positive");
    }
    if (maxRecordsPerCycle < 0 || maxBytesPerCycle < 0) {
      throw new IllegalArgumentException("max records and bytes per cycle must not be negative");
    }
  }

  /** Defaults for tests and embedding: 1h spans, 15m buffer, the default record/byte bounds. */
  public static BatchConfig defaults(String address, String topic, String group, List<Integer> partitions) {
    return new BatchConfig(address, topic, "weir", group, partitions, Duration.ofHours(1), Duration.ofMinutes(15),
        DEFAULT_MAX_RECORDS_PER_CYCLE, DEFAULT_MAX_BYTES_PER_CYCLE, Duration.ofMinutes(10), Duration.ofHours(12), Duration.ofSeconds(1), Duration.ofMillis(100),
        Duration.ofSeconds(10), "", 15_983_616, KafkaSecurity.NONE,
        AssignedConsumers.fetchBytesFor(KafkaConfig.DEFAULT_COMPRESSION));
  }

  /** Bootstrap servers and security for a client configuration. */
  public java.util.Properties clientProperties() {
    java.util.Properties p = new java.util.Properties();
    p.put(org.apache.kafka.clients.CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, address);
    security.applyTo(p);
    return p;
  }

  public BatchConfig withInterval(Duration interval, Duration buffer) {
    return new BatchConfig(address, topic, clientId, consumerGroup, partitions, interval, buffer, maxRecordsPerCycle,
        maxBytesPerCycle, cycleTimeout, lookbackOnNoCommit, idlePollInterval, retryBackoffMin, retryBackoffMax,
        deadLetterTopic, maxRecordSizeBytes, security,
        partitionFetchBytes);
  }

  public BatchConfig withLimits(long maxRecords, long maxBytes, Duration timeout) {
    return new BatchConfig(address, topic, clientId, consumerGroup, partitions, consumeInterval,
        consumeIntervalBuffer, maxRecords, maxBytes, timeout, lookbackOnNoCommit, idlePollInterval, retryBackoffMin,
        retryBackoffMax, deadLetterTopic, maxRecordSizeBytes, security,
        partitionFetchBytes);
  }

  public BatchConfig withLookback(Duration lookback) {
    return new BatchConfig(address, topic, clientId, consumerGroup, partitions, consumeInterval,
        consumeIntervalBuffer, maxRecordsPerCycle, maxBytesPerCycle, cycleTimeout, lookback, idlePollInterval,
        retryBackoffMin, retryBackoffMax, deadLetterTopic, maxRecordSizeBytes, security,
        partitionFetchBytes);
  }

  public BatchConfig withDeadLetterTopic(String topic) {
    return new BatchConfig(address, this.topic, clientId, consumerGroup, partitions, consumeInterval,
        consumeIntervalBuffer, maxRecordsPerCycle, maxBytesPerCycle, cycleTimeout, lookbackOnNoCommit,
        idlePollInterval, retryBackoffMin, retryBackoffMax, topic, maxRecordSizeBytes, security,
        partitionFetchBytes);
  }
}
