package dev.weir.storage.ingest;

import java.time.Duration;

/**
 * Settings of ingest storage's Kafka client side (flags {@code ingest-storage.kafka.*}).
 *
 * @param address bootstrap servers
 * @param consumerGroup group used only to store offsets (default: the ingester ID)
 * @param startPosition where to start without a committed offset: last-offset (= start when
 *     there is none), start, end, timestamp
 * @param startTimestampMillis for {@code timestamp}
 * @param maxLagAtStartup readiness waits until a catch-up round took less than this; 0 disables
 * @param ingestionConcurrency shard workers appending to storage; 0 = the sequential loop
 * @param batchSize series per append call of a shard worker
 * @param maxBufferedBytes record bytes in the pipeline before the fetch loop waits
 * @param deadLetterTopic receives undecodable records; empty disables
 * @param preferOffsetFile start from the offset file in the data dir even when the group has one
 * @param security SASL and TLS of every client
 * @param fetchConcurrency consumers fetching ahead in parallel while the reader is far behind; 0 or
 *     1 = the one consumer
 * @param producerRecordVersion the record format the writer produces ({@link RecordFormat}); readers
 *     accept every version
 * @param producerCompression the codec of the record batches the writer produces: one of
 *     {@link #COMPRESSIONS}; consumers read every codec
 */
public record KafkaConfig(String address, String topic, String clientId, Duration dialTimeout, Duration writeTimeout,
    String consumerGroup, Duration commitInterval, String startPosition, long startTimestampMillis,
    Duration maxLagAtStartup, int maxRecordSizeBytes, boolean autoCreateTopic, int autoCreatePartitions,
    int ingestionConcurrency, int batchSize, long maxBufferedBytes, String deadLetterTopic, boolean preferOffsetFile,
    KafkaSecurity security, int fetchConcurrency, int producerRecordVersion, String producerCompression) {

  public static final java.util.List<String> START_POSITIONS = java.util.List.of("last-offset", "start", "end",
      "timestamp");

  /** The codecs of {@code producerCompression} (Kafka's {@code compression.type}). */
  public static final java.util.List<String> COMPRESSIONS = java.util.List.of("none", "gzip", "snappy", "lz4", "zstd");

  /** The writer's codec unless configured (see docs/benchmarks.md for the measurement behind it). */
  public static final String DEFAULT_COMPRESSION = "lz4";

  public static KafkaConfig defaults(String address, String topic, String group) {
    return new KafkaConfig(address, topic, "weir", Duration.ofSeconds(2), Duration.ofSeconds(10), group,
        Duration.ofSeconds(1), "last-offset", 0, Duration.ofSeconds(15), 15_983_616, true, 128, 8, 150,
        100L << 20, "", false, KafkaSecurity.NONE, 0, 1, DEFAULT_COMPRESSION);
  }

  public KafkaConfig withConcurrency(int ingestion, int batch) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestion, batch, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withStart(String position, long timestamp) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        position, timestamp, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withDeadLetterTopic(String t) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, t, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withMaxBufferedBytes(long b) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, b, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withMaxRecordSize(int bytes) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, bytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withPreferOffsetFile(boolean prefer) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, prefer, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withFetchConcurrency(int n) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, n,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withSecurity(KafkaSecurity sec) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, sec, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }

  public KafkaConfig withProducerRecordVersion(int version) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        version, producerCompression);
  }

  public KafkaConfig withProducerCompression(String codec) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, maxLagAtStartup, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, codec);
  }

  /** Bootstrap servers and security for a client configuration. */
  public java.util.Properties clientProperties() {
    java.util.Properties p = new java.util.Properties();
    p.put(org.apache.kafka.clients.CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, address);
    security.applyTo(p);
    return p;
  }

  public KafkaConfig withMaxLagAtStartup(Duration d) {
    return new KafkaConfig(address, topic, clientId, dialTimeout, writeTimeout, consumerGroup, commitInterval,
        startPosition, startTimestampMillis, d, maxRecordSizeBytes, autoCreateTopic, autoCreatePartitions,
        ingestionConcurrency, batchSize, maxBufferedBytes, deadLetterTopic, preferOffsetFile, security, fetchConcurrency,
        producerRecordVersion, producerCompression);
  }
}
