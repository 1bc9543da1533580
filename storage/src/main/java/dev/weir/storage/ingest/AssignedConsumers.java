package dev.weir.storage.ingest;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteBufferDeserializer;

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
   * How much larger than a fetch the records it brings may be: a fetch returns batches as stored,
   * compressed when the writer compressed them, and the poll after it decompresses its records
   * all at once (lz4 shrank the benchmark's remote write records 7.6 ×). Fetch sizes are divided
   * by this when Weir's writer compresses ({@code producer-compression} other than none, the same
   * flag in every component's configuration).
   */
  static final int COMPRESSION_ALLOWANCE = 8;

  /** {@link #COMPRESSION_ALLOWANCE} for a deployment whose writer compresses, else 1. */
  static int compressionAllowance(KafkaConfig config) {
    return compressionAllowance(config.producerCompression());
  }

  private static int compressionAllowance(String producerCompression) {
    return producerCompression.equals("none") ? 1 : COMPRESSION_ALLOWANCE;
  }

  /**
   * Kafka's default fetch size per partition (8 MiB) in records: ÷ {@link #COMPRESSION_ALLOWANCE}
   * in batches when the writer's codec ({@code producerCompression}) compresses. For consumers
   * without a pipeline bound of their own (the block-builder's).
   */
  public static int fetchBytesFor(String producerCompression) {
    return MAX_PARTITION_FETCH_BYTES / compressionAllowance(producerCompression);
  }

  /**
   * The fetch size for a reader whose pipeline holds at most {@code maxBufferedBytes}: an eighth of
   * it in records, so that ÷ {@code allowance} in stored batches, between 1 and 8 MiB. A consumer
   * of one partition holds at most about two fetches (one buffered, one in flight) plus its socket
   * buffer, and the fetch thread one decompressed poll: small against the pipeline's bound, and
   * counted in the reader's documented bound. Measured in a 1 GiB catch-up of lz4 batches: 8 MiB
   * fetches (~61 MB polls) took the reader's peak RSS from 1.13 to 2.2 GB and its speed from 101
   * to 89 MB/s; of uncompressed ones, 1.6 MiB fetches slowed it from 97 to 90 MB/s (docs/benchmarks.md).
   */
  static int partitionFetchBytes(long maxBufferedBytes, int allowance) {
    return (int) Math.max(MIN_PARTITION_FETCH_BYTES,
        Math.min(MAX_PARTITION_FETCH_BYTES, maxBufferedBytes / 8 / allowance));
  }

  /**
   * A concurrent fetcher's fetch size for a window of {@code windowFetchBytes} of records: ÷
   * {@code allowance} in stored batches, at least 64 KiB. A fetch of a window's size of lz4 batches
   * held ~8 windows of records, all but one dropped at the window's cut and fetched again
   * (measured: 70 CPU-s instead of 18 and 11 GB of RSS for a 1 GiB backlog).
   */
  static int fetcherFetchBytes(int windowFetchBytes, int allowance) {
    return Math.max(64 << 10, windowFetchBytes / allowance);
  }

  /**
   * @param partitionFetchBytes the most one fetch returns for the partition (a single batch
   *     larger than this still comes whole, as Kafka must make progress)
   */
  public static KafkaConsumer<byte[], byte[]> create(Properties base, String clientId, String group,
      Duration apiTimeout, int partitionFetchBytes) {
    return new KafkaConsumer<>(properties(base, clientId, group, apiTimeout, partitionFetchBytes,
        ByteArrayDeserializer.class));
  }

  /**
   * A partition reader's consumer: like {@link #create(Properties, String, String, Duration, int)},
   * but a record's value is Kafka's {@code ByteBufferDeserializer} view of the bytes the poll
   * decompressed or fetched, not a copy (a 1 GiB catch-up copied 0.96 GB of values into new arrays,
   * a third of what it allocated). A view keeps its whole buffer alive: a record of a compressed
   * batch has a buffer of its own (key, value, headers), a record of an uncompressed batch is a
   * slice of the whole fetch response. Callers pass each record through {@link #unpinned} before
   * they hold it, so that what a held record keeps alive stays within its counted size.
   */
  static KafkaConsumer<byte[], ByteBuffer> createReader(Properties base, String clientId, String group,
      Duration apiTimeout, int partitionFetchBytes) {
    return new KafkaConsumer<>(properties(base, clientId, group, apiTimeout, partitionFetchBytes,
        ByteBufferDeserializer.class));
  }

  /** Slack for a record's key, headers and framing in the buffer of a decompressed record. */
  private static final int VIEW_SLACK_BYTES = 1024;

  /**
   * {@code r} itself when its value's buffer is at most twice the value plus {@value
   * #VIEW_SLACK_BYTES} bytes (a record of a compressed batch), else {@code r} with a copy of its
   * value (a slice of an uncompressed fetch): records held in the pipeline or in a concurrent
   * fetcher's window then keep alive at most twice their counted bytes plus 1 KiB each, whichever
   * records finish first, instead of one whole fetch each.
   */
  static ConsumerRecord<byte[], ByteBuffer> unpinned(ConsumerRecord<byte[], ByteBuffer> r) {
    ByteBuffer v = r.value();
    if (v == null || (v.hasArray() && v.array().length <= 2L * v.remaining() + VIEW_SLACK_BYTES)) {
      return r;
    }
    ByteBuffer copy = ByteBuffer.wrap(RecordFormat.wholeArray(v));
    return new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), r.timestamp(), r.timestampType(),
        r.serializedKeySize(), r.serializedValueSize(), r.key(), copy, r.headers(), r.leaderEpoch());
  }

  private static Properties properties(Properties base, String clientId, String group, Duration apiTimeout,
      int partitionFetchBytes, Class<?> valueDeserializer) {
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
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, valueDeserializer);
    return p;
  }
}
