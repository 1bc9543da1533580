package dev.weir.storage.ingest;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Consumers for manual assignment: the group only stores offsets (no subscribe, no auto commit, no
 * automatic reset — a missing position is an error the caller resolves), and fetches sized so one
 * partition keeps the pipe full without huge buffers.
 */
public final class AssignedConsumers {
  private AssignedConsumers() {}

  /** Kafka's default fetch size per partition, and the most a reader asks for. */
  static final int MAX_PARTITION_FETCH_BYTES = 8 << 20;
  private static final int MIN_PARTITION_FETCH_BYTES = 1 << 20;

  /**
   * @param base bootstrap servers and security ({@link KafkaConfig#clientProperties()})
   */
  public static KafkaConsumer<byte[], byte[]> create(Properties base, String clientId, String group,
      Duration apiTimeout) {
    return create(base, clientId, group, apiTimeout, MAX_PARTITION_FETCH_BYTES);
  }

  /**
   * The fetch size for a reader whose pipeline holds at most {@code maxBufferedBytes}: an eighth of
   * it, between 1 and 8 MiB. A consumer of one partition holds at most about two fetches (one
   * buffered, one in flight) plus its socket buffer, so its memory is 2 × this + 1 MiB — small
   * against the pipeline's bound, and counted in the reader's documented bound.
   */
  static int partitionFetchBytes(long maxBufferedBytes) {
    return (int) Math.max(MIN_PARTITION_FETCH_BYTES, Math.min(MAX_PARTITION_FETCH_BYTES, maxBufferedBytes / 8));
  }

  /**
   * @param partitionFetchBytes the most one fetch returns for the partition (a single batch
   *     larger than this still comes whole, as Kafka must make progress)
   */
  public static KafkaConsumer<byte[], byte[]> create(Properties base, String clientId, String group,
      Duration apiTimeout, int partitionFetchBytes) {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
    p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, partitionFetchBytes);
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, partitionFetchBytes);
    p.put(ConsumerConfig.RECEIVE_BUFFER_CONFIG, 1 << 20);
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.max(10_000, apiTimeout.toMillis()));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return new KafkaConsumer<>(p);
  }
}
