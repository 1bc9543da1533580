package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Copies records that cannot be decoded to a dead-letter topic, with their headers plus
 * {@code weir-dlq-source-topic}, {@code -partition}, {@code -offset} and {@code weir-dlq-error}.
 * The producer (acks=all, idempotent) is created on first use. A failed send is a server error,
 * so the caller holds its partition rather than lose the record.
 *
 * <p>Used by one consumer thread at a time.
 */
public final class DeadLetterProducer implements AutoCloseable {
  private final Properties base;
  private final String topic;
  private final int maxRecordSizeBytes;
  private final Duration writeTimeout;
  private @Nullable KafkaProducer<byte[], byte[]> producer;

  /**
   * @param base bootstrap servers and security ({@link KafkaConfig#clientProperties()})
   */
  public DeadLetterProducer(Properties base, String topic, int maxRecordSizeBytes, Duration writeTimeout) {
    this.base = base;
    this.topic = topic;
    this.maxRecordSizeBytes = maxRecordSizeBytes;
    this.writeTimeout = writeTimeout;
  }

  public String topic() {
    return topic;
  }

  /** Produces a copy of {@code r} and waits for the acknowledgement. */
  public void send(ConsumerRecord<byte[], byte[]> r, String error) {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p == null) {
      Properties props = new Properties();
      props.putAll(base);
      props.put(ProducerConfig.ACKS_CONFIG, "all");
      props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxRecordSizeBytes + (1 << 20));
      p = new KafkaProducer<>(props);
      producer = p;
    }
    ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(topic, null, r.key(), r.value());
    r.headers().forEach(h -> out.headers().add(h));
    out.headers().add(new RecordHeader("weir-dlq-source-topic", r.topic().getBytes(StandardCharsets.UTF_8)));
    out.headers().add(new RecordHeader("weir-dlq-source-partition",
        String.valueOf(r.partition()).getBytes(StandardCharsets.UTF_8)));
    out.headers().add(new RecordHeader("weir-dlq-source-offset",
        String.valueOf(r.offset()).getBytes(StandardCharsets.UTF_8)));
    out.headers().add(new RecordHeader("weir-dlq-error", error.getBytes(StandardCharsets.UTF_8)));
    try {
      p.send(out).get(writeTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ServerErrorException("dead-letter topic " + topic + " write failed: " + e, e);
    }
  }

  @Override
  public void close() {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p != null) {
      p.close(Duration.ofSeconds(5));
    }
  }
}
