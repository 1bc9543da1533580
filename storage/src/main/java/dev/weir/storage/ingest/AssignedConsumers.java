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

  /**
   * @param base bootstrap servers and security ({@link KafkaConfig#clientProperties()})
   */
  public static KafkaConsumer<byte[], byte[]> create(Properties base, String clientId, String group,
      Duration apiTimeout) {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
    p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 16 << 20);
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 << 20);
    p.put(ConsumerConfig.RECEIVE_BUFFER_CONFIG, 4 << 20);
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.max(10_000, apiTimeout.toMillis()));
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return new KafkaConsumer<>(p);
  }
}
