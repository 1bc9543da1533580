package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies records that cannot be decoded to a dead-letter topic, with their headers plus
 * {@code weir-dlq-source-topic}, {@code -partition}, {@code -offset} and {@code weir-dlq-error}.
 * The producer (acks=all, idempotent, every timeout bounded by the write timeout) is created on
 * first use.
 *
 * <p>Errors are classified: a retriable one (timeout, broker not available, not leader) is a
 * {@link ServerErrorException}, so the caller holds its partition and retries. A permanent one
 * (the topic does not exist, authorization failed, invalid topic) is a {@link PermanentFailure}:
 * retrying cannot help until an operator acts, and {@link #permanentFailure()} says why until a
 * send succeeds again, for the owner's not-ready reason. A record too large for the topic is sent
 * again truncated (its key and headers, the value cut to fit, plus {@code weir-dlq-original-size}
 * and {@code weir-dlq-send-error}), so the poison record is kept in part and the partition moves on.
 *
 * <p>Used by one consumer thread at a time; {@link #permanentFailure()} from any thread.
 */
public final class DeadLetterProducer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterProducer.class);
  public static final String ORIGINAL_SIZE_HEADER = "weir-dlq-original-size";
  public static final String SEND_ERROR_HEADER = "weir-dlq-send-error";

  private final Properties base;
  private final String topic;
  private final int maxRecordSizeBytes;
  private final Duration writeTimeout;
  private @Nullable KafkaProducer<byte[], byte[]> producer;
  private volatile @Nullable String permanentFailure;

  /** A dead-letter send that no retry can fix; the message says what an operator must change. */
  public static final class PermanentFailure extends ServerErrorException {
    public PermanentFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }

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

  /** The last permanent failure not yet resolved by a successful send, or null. */
  public @Nullable String permanentFailure() {
    return permanentFailure;
  }

  /**
   * Produces a copy of {@code r} and waits for the acknowledgement.
   *
   * @throws PermanentFailure when the topic cannot take the record until an operator acts
   * @throws ServerErrorException when a retry may succeed
   */
  public void send(ConsumerRecord<byte[], ?> r, String error) {
    byte[] value = valueBytes(r.value());
    try {
      produce(copy(r, error, value));
      permanentFailure = null;
      return;
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof RecordTooLargeException)) {
        throw classify(e.getCause());
      }
      log.error("msg=\"record too large for the dead-letter topic; sending it truncated\" topic={} source={}-{}@{}"
          + " size={}", topic, r.topic(), r.partition(), r.offset(), value.length);
    }
    sendTruncated(r, error, value);
  }

  /** A record's value as produced: a partition reader's values are {@link ByteBuffer} views. */
  private static byte[] valueBytes(@Nullable Object value) {
    if (value == null) {
      return new byte[0];
    }
    return value instanceof ByteBuffer b ? RecordFormat.wholeArray(b) : (byte[]) value;
  }

  /** Halves the value until the topic takes it; an empty value that still does not fit is permanent. */
  private void sendTruncated(ConsumerRecord<byte[], ?> r, String error, byte[] value) {
    int len = value.length;
    while (true) {
      len = len / 2;
      ProducerRecord<byte[], byte[]> out = copy(r, error, Arrays.copyOf(value, len));
      out.headers().add(new RecordHeader(ORIGINAL_SIZE_HEADER, utf8(String.valueOf(value.length))));
      out.headers().add(new RecordHeader(SEND_ERROR_HEADER, utf8("record too large for topic " + topic
          + "; value truncated to " + len + " of " + value.length + " bytes")));
      try {
        produce(out);
        permanentFailure = null;
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof RecordTooLargeException) || len == 0) {
          throw classify(e.getCause());
        }
      }
    }
  }

  private void produce(ProducerRecord<byte[], byte[]> out) throws ExecutionException {
    try {
      producer().send(out).get(writeTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted writing to dead-letter topic " + topic, e);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new ExecutionException(new TimeoutException("no acknowledgement in " + writeTimeout));
    } catch (org.apache.kafka.common.KafkaException e) {
      throw new ExecutionException(e); // thrown by send() itself, e.g. a record over max.request.size
    }
  }

  private RuntimeException classify(Throwable cause) {
    String reason = null;
    if (cause instanceof AuthorizationException) {
      reason = "not authorized to write dead-letter topic " + topic + ": " + cause.getMessage();
    } else if (cause instanceof InvalidTopicException) {
      reason = "dead-letter topic name " + topic + " is invalid: " + cause.getMessage();
    } else if (cause instanceof UnknownTopicOrPartitionException
        || cause instanceof TimeoutException && topicMissing()) {
      // A missing topic shows as a metadata timeout; only an admin request tells it from an outage.
      reason = "dead-letter topic " + topic + " does not exist (and is not auto-created)";
    } else if (cause instanceof RecordTooLargeException) {
      reason = "record does not fit dead-letter topic " + topic + " even with an empty value: " + cause.getMessage();
    }
    if (reason == null) {
      return new ServerErrorException("dead-letter topic " + topic + " write failed: " + cause, cause);
    }
    if (!reason.equals(permanentFailure)) {
      log.error("msg=\"dead-letter write failed permanently; the partition is held until this is fixed\" err=\"{}\"",
          reason.replace('"', '\''));
    }
    permanentFailure = reason;
    return new PermanentFailure(reason, cause);
  }

  private boolean topicMissing() {
    Properties p = new Properties();
    p.putAll(base);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) writeTimeout.toMillis());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) writeTimeout.toMillis());
    try (Admin admin = Admin.create(p)) {
      admin.describeTopics(List.of(topic)).allTopicNames().get(writeTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return false;
    } catch (ExecutionException e) {
      return e.getCause() instanceof UnknownTopicOrPartitionException;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.TimeoutException | RuntimeException e) {
      return false;
    }
  }

  private KafkaProducer<byte[], byte[]> producer() {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p == null) {
      Properties props = new Properties();
      props.putAll(base);
      int timeout = (int) writeTimeout.toMillis();
      props.put(ProducerConfig.ACKS_CONFIG, "all");
      props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
      // Bounded, so a send gives up (and is retried by the caller) instead of lingering while a
      // later retry sends a second copy.
      props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
      props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeout);
      props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
      props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxRecordSizeBytes + (1 << 20));
      p = new KafkaProducer<>(props);
      producer = p;
    }
    return p;
  }

  private ProducerRecord<byte[], byte[]> copy(ConsumerRecord<byte[], ?> r, String error, byte[] value) {
    ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(topic, null, r.key(), value);
    r.headers().forEach(h -> out.headers().add(h));
    out.headers().add(new RecordHeader("weir-dlq-source-topic", utf8(r.topic())));
    out.headers().add(new RecordHeader("weir-dlq-source-partition", utf8(String.valueOf(r.partition()))));
    out.headers().add(new RecordHeader("weir-dlq-source-offset", utf8(String.valueOf(r.offset()))));
    out.headers().add(new RecordHeader("weir-dlq-error", utf8(error)));
    return out;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    KafkaProducer<byte[], byte[]> p = producer;
    if (p != null) {
      p.close(Duration.ofSeconds(5));
    }
  }
}
