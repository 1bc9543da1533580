package dev.weir.storage.ingest;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ServerErrorException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Produces write requests to the ingest topic: one record per (tenant, partition) part in the
 * configured {@link RecordFormat} version, split so no record exceeds the size limit (before
 * compression), in batches of the configured codec, with acks=all and idempotence. {@link #write} returns only
 * when Kafka acknowledged every record; otherwise, at the latest when the write timeout passed
 * (the producer itself retries within it: broker not available, not leader), it throws
 * {@link ServerErrorException} — gRPC UNAVAILABLE / HTTP 503 — and the caller's client retries (an idempotent retry of what did land is harmless: an identical sample
 * is stored once).
 *
 * <p>Thread-safe (one producer shared by all pushes).
 */
public final class Writer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Writer.class);

  private final KafkaConfig config;
  private final WriterMetrics metrics;
  private final KafkaProducer<byte[], byte[]> producer;
  private final int version;
  private final byte[] versionHeader;

  public Writer(KafkaConfig config, WriterMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
    this.version = config.producerRecordVersion();
    if (version != 1 && version != 2) {
      throw new IllegalArgumentException("unknown record version " + version);
    }
    this.versionHeader = Integer.toString(version).getBytes(StandardCharsets.UTF_8);
    Properties p = config.clientProperties();
    p.put(ProducerConfig.CLIENT_ID_CONFIG, config.clientId() + "-writer");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.producerCompression());
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, config.maxRecordSizeBytes() + (1 << 20));
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Math.max(64L << 20, 4L * config.maxRecordSizeBytes()));
    int timeout = (int) config.writeTimeout().toMillis();
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeout);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    producer = new KafkaProducer<>(p);
  }

  /**
   * Creates the topic when missing and auto-creation is on.
   *
   * @throws ServerErrorException when the topic is missing and cannot be created
   */
  public static void ensureTopic(KafkaConfig config) {
    Properties p = config.clientProperties();
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Math.max(10_000, config.writeTimeout().toMillis()));
    try (Admin admin = Admin.create(p)) {
      try {
        TopicDescription d = admin.describeTopics(List.of(config.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(config.topic());
        log.info("msg=\"ingest topic exists\" topic={} partitions={}", config.topic(), d.partitions().size());
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
          throw e;
        }
      }
      if (!config.autoCreateTopic()) {
        throw new ServerErrorException("ingest topic " + config.topic() + " does not exist and"
            + " --ingest-storage.kafka.auto-create-topic-enabled is false");
      }
      try {
        admin.createTopics(List.of(new NewTopic(config.topic(), Optional.of(config.autoCreatePartitions()),
            Optional.empty()))).all().get(30, TimeUnit.SECONDS);
        log.info("msg=\"ingest topic created\" topic={} partitions={}", config.topic(), config.autoCreatePartitions());
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new ServerErrorException("cannot check or create ingest topic " + config.topic() + " at "
          + config.address() + ": " + (e instanceof ExecutionException ? e.getCause() : e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while checking the ingest topic", e);
    }
  }

  /**
   * Produces one tenant's requests, one per partition, and waits until all are acknowledged.
   *
   * @return partition → offset of the last record produced there (what a read-your-writes query
   *     names in {@code X-Read-Consistency-Offsets})
   * @throws ServerErrorException when any record was not acknowledged in time
   * @throws dev.weir.storage.errors.ClientErrorException when a single series exceeds the record
   *     size limit (nothing is produced then)
   */
  public Map<Integer, Long> write(String tenant, Map<Integer, WriteRequest> byPartition) {
    Map<Integer, List<byte[]>> values = new TreeMap<>();
    for (Map.Entry<Integer, WriteRequest> e : byPartition.entrySet()) {
      values.put(e.getKey(), RecordFormat.encode(e.getValue(), version, config.maxRecordSizeBytes()));
    }
    return produce(tenant, values);
  }

  /** The record format version this writer produces. */
  public int version() {
    return version;
  }

  /**
   * {@link #write} for parts already assembled as series bytes (the distributor's hot path);
   * only for a writer that produces version 1.
   *
   * @throws IllegalStateException when this writer produces another version
   */
  public Map<Integer, Long> writeV1(String tenant, Map<Integer, RecordV1Builder> byPartition) {
    if (version != 1) {
      throw new IllegalStateException("this writer produces record version " + version + ", not 1");
    }
    Map<Integer, List<byte[]>> values = new TreeMap<>();
    for (Map.Entry<Integer, RecordV1Builder> e : byPartition.entrySet()) {
      values.put(e.getKey(), e.getValue().values(config.maxRecordSizeBytes()));
    }
    return produce(tenant, values);
  }

  private Map<Integer, Long> produce(String tenant, Map<Integer, List<byte[]>> values) {
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    byte[] key = tenant.getBytes(StandardCharsets.UTF_8);
    for (Map.Entry<Integer, List<byte[]>> e : values.entrySet()) {
      for (byte[] part : e.getValue()) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(config.topic(), e.getKey(), key, part);
        r.headers().add(new RecordHeader(RecordFormat.VERSION_HEADER, versionHeader));
        records.add(r);
      }
    }
    long start = System.nanoTime();
    // One deadline for the whole write: send() itself may block (metadata of a broker that is
    // gone, a full buffer) up to max.block.ms, so the acknowledgements get only what is left.
    long deadline = start + config.writeTimeout().toNanos();
    List<Future<RecordMetadata>> acks = new ArrayList<>(records.size());
    Map<Integer, Long> produced = new TreeMap<>();
    long bytes = 0;
    try {
      for (ProducerRecord<byte[], byte[]> r : records) {
        if (System.nanoTime() - deadline >= 0) {
          throw new TimeoutException("write timeout " + config.writeTimeout() + " passed while producing");
        }
        acks.add(producer.send(r));
        bytes += r.value().length;
      }
      for (Future<RecordMetadata> f : acks) {
        RecordMetadata m = f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        produced.merge(m.partition(), m.offset(), Math::max);
      }
    } catch (ExecutionException | TimeoutException | org.apache.kafka.common.KafkaException e) {
      metrics.failures.increment();
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new ServerErrorException("writing to Kafka failed (" + records.size() + " records): " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      metrics.failures.increment();
      throw new ServerErrorException("interrupted while writing to Kafka", e);
    }
    metrics.records.increment(records.size());
    metrics.bytes.increment(bytes);
    metrics.latency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    return produced;
  }

  @Override
  public void close() {
    producer.close(config.writeTimeout());
  }
}
