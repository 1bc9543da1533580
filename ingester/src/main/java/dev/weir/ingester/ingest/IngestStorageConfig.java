package dev.weir.ingester.ingest;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.KafkaSecurity;
import java.time.Duration;

/**
 * Kafka-driven ingestion settings, with Mimir's {@code ingest-storage.*} flag names.
 *
 * @param enabled writes go through Kafka: distributors produce, each ingester consumes the
 *     partition its ID names
 * @param kafka the Kafka client settings (consumer group empty here means the ingester ID)
 * @param pushGrpcEnabled whether the ingester's own gRPC Push appends directly (default: on in
 *     classic mode, off in Kafka mode)
 * @param minPartitionOwners owners a PENDING partition needs before it turns ACTIVE
 * @param minPartitionOwnersDuration how long those owners must have been registered
 * @param strongReadTimeout how long a strong read may wait for the reader to catch up
 * @param deleteInactivePartitionAfter how long a partition stays INACTIVE before, once no instance
 *     owns it, it is removed from the ring; 0 never removes one
 * @param userLagMetricsEnabled export per-tenant lag gauges ({@link UserLagMetrics})
 * @param userLagMetricsMaxTenants most tenants those gauges are exported for
 * @param autoIncreasePartitions an ingester whose partition is beyond the topic's partition count
 *     raises the count (scale-out); otherwise it waits, not ready, for an operator to raise it
 */
public record IngestStorageConfig(boolean enabled, KafkaConfig kafka, boolean pushGrpcEnabled, int minPartitionOwners,
    Duration minPartitionOwnersDuration, Duration strongReadTimeout, Duration deleteInactivePartitionAfter,
    boolean userLagMetricsEnabled, int userLagMetricsMaxTenants, boolean autoIncreasePartitions) {

  /** Tokens per partition in the partition ring (the spread test uses this number). */
  public static final int PARTITION_TOKENS = 128;

  /** The consumer group: the flag, or the ingester ID. */
  public KafkaConfig kafkaFor(String ingesterId) {
    if (!kafka.consumerGroup().isEmpty()) {
      return kafka;
    }
    return new KafkaConfig(kafka.address(), kafka.topic(), kafka.clientId(), kafka.dialTimeout(), kafka.writeTimeout(),
        ingesterId, kafka.commitInterval(), kafka.startPosition(), kafka.startTimestampMillis(),
        kafka.maxLagAtStartup(), kafka.maxRecordSizeBytes(), kafka.autoCreateTopic(), kafka.autoCreatePartitions(),
        kafka.ingestionConcurrency(), kafka.batchSize(), kafka.maxBufferedBytes(), kafka.deadLetterTopic(),
        kafka.preferOffsetFile(), kafka.security(), kafka.fetchConcurrency(), kafka.producerRecordVersion(),
        kafka.producerCompression());
  }

  /** Flag definitions for {@link IngestStorageConfig}. */
  public static final class Flags {
    private final Flag<Boolean> enabled;
    private final Flag<String> address;
    private final Flag<String> topic;
    private final Flag<String> clientId;
    private final Flag<Duration> dialTimeout;
    private final Flag<Duration> writeTimeout;
    private final Flag<String> group;
    private final Flag<Duration> commitInterval;
    private final Flag<String> startPosition;
    private final Flag<Long> startTimestamp;
    private final Flag<Duration> maxLag;
    private final Flag<Integer> maxRecordSize;
    private final Flag<Integer> recordVersion;
    private final Flag<String> compression;
    private final Flag<Boolean> autoCreate;
    private final Flag<Integer> autoCreatePartitions;
    private final Flag<Boolean> autoIncreasePartitions;
    private final Flag<Integer> concurrency;
    private final Flag<Integer> fetchConcurrency;
    private final Flag<Integer> batchSize;
    private final Flag<Boolean> userLagMetrics;
    private final Flag<Integer> userLagMaxTenants;
    private final Flag<Long> maxBuffered;
    private final Flag<String> deadLetter;
    private final Flag<Boolean> preferFile;
    private final Flag<Boolean> pushGrpc;
    private final Flag<Integer> minOwners;
    private final Flag<Duration> minOwnersDuration;
    private final Flag<Duration> strongTimeout;
    private final Flag<Duration> deleteInactiveAfter;
    private final Flag<String> saslMechanism;
    private final Flag<String> saslUsername;
    private final Flag<String> saslPassword;
    private final Flag<Boolean> tls;
    private final Flag<String> tlsCa;

    public Flags(FlagSet fs) {
      String k = "ingest-storage.kafka.";
      enabled = fs.bool("ingest-storage.enabled", false, "Kafka-driven ingestion: distributors write to Kafka and"
          + " each ingester consumes the partition its ID names (ingester-zone-a-7 → partition 7).");
      address = fs.string(k + "address", "localhost:9092", "The Kafka bootstrap servers, host:port[,host:port].");
      topic = fs.string(k + "topic", "weir-ingest", "The Kafka topic holding the write requests.");
      clientId = fs.string(k + "client-id", "weir", "Prefix of the Kafka client IDs.");
      dialTimeout = fs.duration(k + "dial-timeout", Duration.ofSeconds(2), "Timeout of Kafka metadata requests.");
      writeTimeout = fs.duration(k + "write-timeout", Duration.ofSeconds(10),
          "How long a push may wait for Kafka to acknowledge its records before failing (server error).");
      group = fs.string(k + "consumer-group", "", "The consumer group whose committed offset an ingester resumes"
          + " from (it is used only to store offsets); empty means the ingester ID.");
      commitInterval = fs.duration(k + "consumer-group-offset-commit-interval", Duration.ofSeconds(1),
          "How often the ingester fsyncs its WAL and commits the offset after the last fully appended record.");
      startPosition = fs.oneOf(k + "consume-from-position-at-startup", "last-offset", KafkaConfig.START_POSITIONS,
          "Where to start consuming when the group has no committed offset (and there is no offset file):"
              + " last-offset (= start), start, end, timestamp.");
      startTimestamp = fs.int64(k + "consume-from-timestamp-at-startup", 0,
          "Unix milliseconds to start from with consume-from-position-at-startup=timestamp.");
      maxLag = fs.duration(k + "max-consumer-lag-at-startup", Duration.ofSeconds(15), "At start-up the ingester"
          + " turns ready (and ACTIVE in the ring) only once it consumed the partition up to its end within this;"
          + " 0 turns ready at once.");
      maxRecordSize = fs.integer(k + "producer-max-record-size-bytes", 15_983_616,
          "Largest record produced; bigger write requests are split between series.");
      recordVersion = fs.integer(k + "producer-record-version", 1, "Record format the distributor produces: 1"
          + " (prometheus.WriteRequest) or 2 (remote write 2.0 with a symbols table per record, smaller). Readers"
          + " accept both; upgrade every reader (ingester, block-builder) before a writer produces 2.");
      compression = fs.oneOf(k + "producer-compression", KafkaConfig.DEFAULT_COMPRESSION, KafkaConfig.COMPRESSIONS,
          "Codec of the record batches the distributor produces. Consumers read every codec. lz4"
          + " costs the distributor and the ingester a little CPU and saves the broker most of its own (measured in"
          + " docs/benchmarks.md); Mimir's Kafka client produces snappy.");
      autoCreate = fs.bool(k + "auto-create-topic-enabled", true, "Create the topic at start-up when it is missing.");
      autoCreatePartitions = fs.integer(k + "auto-create-topic-default-partitions", 128,
          "Partitions of an auto-created topic (at least the number of ingester IDs per zone).");
      autoIncreasePartitions = fs.bool(k + "auto-increase-partitions-enabled", false, "Scale-out: an ingester whose"
          + " partition (from its ID) is beyond the topic's partition count raises the count to include it (Kafka"
          + " Admin createPartitions; the count is never lowered, and concurrent raises are harmless). When off it"
          + " stays not ready, naming its partition and the topic's count, until the count is raised by hand."
          + " Records keyed by tenant are not re-partitioned: Weir chooses each record's partition itself.");
      concurrency = fs.integer(k + "ingestion-concurrency-max", 8, "Shard workers appending consumed series to"
          + " storage, at most the number of CPUs less one (records are decoded as concurrently); 0 consumes"
          + " in one sequential loop.");
      fetchConcurrency = fs.integer(k + "fetch-concurrency-max", 0, "Consumers fetching consecutive ranges of the"
          + " partition in parallel while the reader is far behind (start-up catch-up), handed over in offset"
          + " order; 0 or 1 fetches with one consumer. Helps when fetch latency, not processing, limits catch-up.");
      batchSize = fs.integer(k + "ingestion-concurrency-batch-size", 150,
          "Series per append call of a shard worker.");
      maxBuffered = fs.int64(k + "max-buffered-bytes", 100L << 20, "Record bytes in the reader's pipeline before"
          + " fetching waits: bounds memory whatever the backlog.");
      deadLetter = fs.string(k + "dead-letter-topic", "", "Topic receiving undecodable records, with headers naming"
          + " source partition, offset and error; empty only counts and skips them.");
      preferFile = fs.bool(k + "offset-file-preferred", false, "Start from the offset file in the data dir even when"
          + " the consumer group has a committed offset.");
      pushGrpc = fs.bool("ingester.push-grpc-method-enabled", true, "Whether the ingester's gRPC Push appends"
          + " directly. In Kafka mode it is off unless set explicitly: writes go to the distributor.");
      minOwners = fs.integer("ingester.partition-ring.min-partition-owners-count", 1,
          "Owners a PENDING partition needs before it turns ACTIVE and receives writes.");
      minOwnersDuration = fs.duration("ingester.partition-ring.min-partition-owners-duration", Duration.ofSeconds(10),
          "How long a partition's owners must have been registered before it turns ACTIVE.");
      deleteInactiveAfter = fs.duration("ingester.partition-ring.delete-inactive-partition-after",
          Duration.ofHours(13), "A partition INACTIVE (prepare-partition-downscale) for this long and owned by no"
              + " ingester any more is removed from the partition ring, so queriers stop asking for it. At least"
              + " querier.query-ingesters-within; 0 never removes one.");
      strongTimeout = fs.duration("ingester.read-consistency-strong-timeout", Duration.ofSeconds(30),
          "How long a query with X-Read-Consistency: strong (or X-Read-Consistency-Offsets) waits for the partition"
              + " to be consumed to its end (or the named offset); then 503.");
      userLagMetrics = fs.bool("ingester.user-lag-metrics-enabled", false, "Kafka mode: export per-tenant gauges"
          + " weir_ingester_user_lag_seconds{user,partition} and weir_ingester_user_newest_sample_timestamp_seconds"
          + "{user} for the tenants with series in this ingester (see user-lag-metrics-max-tenants).");
      userLagMaxTenants = fs.integer("ingester.user-lag-metrics-max-tenants", 100, "Most tenants the per-tenant lag"
          + " gauges are exported for (one series per tenant and gauge); further tenants are counted in"
          + " weir_ingester_user_lag_metrics_tenants_not_exported.");
      saslMechanism = fs.oneOf(k + "sasl-mechanism", "", KafkaSecurity.MECHANISMS, "SASL mechanism of the Kafka"
          + " clients: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; empty for none.");
      saslUsername = fs.string(k + "sasl-username", "", "SASL username (with sasl-mechanism).");
      saslPassword = fs.string(k + "sasl-password", "", "SASL password (with sasl-mechanism); on Kubernetes pass it"
          + " from a Secret as $(ENV_VAR).");
      tls = fs.bool(k + "tls-enabled", false, "Connect to Kafka over TLS.");
      tlsCa = fs.string(k + "tls-ca-path", "", "PEM file of CA certificates that sign the brokers' certificates;"
          + " empty for the JVM's trust store.");
    }

    public IngestStorageConfig build() throws ConfigException {
      if (concurrency.get() < 0 || concurrency.get() > 256) {
        throw new ConfigException("ingest-storage.kafka.ingestion-concurrency-max must be in [0, 256]");
      }
      if (fetchConcurrency.get() < 0 || fetchConcurrency.get() > 64) {
        throw new ConfigException("ingest-storage.kafka.fetch-concurrency-max must be in [0, 64]");
      }
      if (batchSize.get() < 1) {
        throw new ConfigException("ingest-storage.kafka.ingestion-concurrency-batch-size must be at least 1");
      }
      if (maxRecordSize.get() < 1024) {
        throw new ConfigException("ingest-storage.kafka.producer-max-record-size-bytes must be at least 1024");
      }
      if (maxBuffered.get() < maxRecordSize.get()) {
        throw new ConfigException("ingest-storage.kafka.max-buffered-bytes must be at least"
            + " producer-max-record-size-bytes");
      }
      if (enabled.get() && topic.get().isEmpty()) {
        throw new ConfigException("ingest-storage.kafka.topic is required with ingest-storage.enabled");
      }
      if (startPosition.get().equals("timestamp") && startTimestamp.get() <= 0) {
        throw new ConfigException("ingest-storage.kafka.consume-from-timestamp-at-startup is required with"
            + " consume-from-position-at-startup=timestamp");
      }
      if (recordVersion.get() != 1 && recordVersion.get() != 2) {
        throw new ConfigException("ingest-storage.kafka.producer-record-version must be 1 or 2, not "
            + recordVersion.get());
      }
      if (autoCreatePartitions.get() < 1) {
        throw new ConfigException("ingest-storage.kafka.auto-create-topic-default-partitions must be at least 1");
      }
      if (!saslMechanism.get().isEmpty() && saslUsername.get().isEmpty()) {
        throw new ConfigException("ingest-storage.kafka.sasl-username is required with sasl-mechanism");
      }
      KafkaConfig kafka = new KafkaConfig(address.get(), topic.get(), clientId.get(), dialTimeout.get(),
          writeTimeout.get(), group.get(), commitInterval.get(), startPosition.get(), startTimestamp.get(), maxLag.get(),
          maxRecordSize.get(), autoCreate.get(), autoCreatePartitions.get(), concurrency.get(), batchSize.get(),
          maxBuffered.get(), deadLetter.get(), preferFile.get(), new KafkaSecurity(saslMechanism.get(),
          saslUsername.get(), saslPassword.get(), tls.get(), tlsCa.get()), fetchConcurrency.get(),
          recordVersion.get(), compression.get());
      boolean push = enabled.get() ? pushGrpc.isSet() && pushGrpc.get() : pushGrpc.get();
      if (deleteInactiveAfter.get().isNegative()) {
        throw new ConfigException("ingester.partition-ring.delete-inactive-partition-after must not be negative");
      }
      if (userLagMaxTenants.get() < 1) {
        throw new ConfigException("ingester.user-lag-metrics-max-tenants must be at least 1");
      }
      return new IngestStorageConfig(enabled.get(), kafka, push, minOwners.get(), minOwnersDuration.get(),
          strongTimeout.get(), deleteInactiveAfter.get(), userLagMetrics.get(), userLagMaxTenants.get(),
          autoIncreasePartitions.get());
    }
  }
}
