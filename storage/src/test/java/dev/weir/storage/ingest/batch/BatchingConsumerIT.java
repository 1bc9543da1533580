package dev.weir.storage.ingest.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.testing.Backlog;
import dev.weir.storage.testing.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The batching consumer against a real broker, with a recording sink. */
class BatchingConsumerIT {
  static final long HOUR = 3_600_000L;

  KafkaBroker broker;
  String topic;
  String group;
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final List<BatchingConsumer> consumers = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    broker = KafkaBroker.shared();
    topic = "bc-" + UUID.randomUUID();
    group = "g-" + UUID.randomUUID();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (BatchingConsumer c : consumers) {
      c.close();
    }
  }

  /** What a sink saw: one entry per attempt. */
  record Attempt(int partition, long start, long firstTs, List<Long> offsets, List<Long> recordTimes, long end,
      boolean flushed) {}

  /** A sink that records every attempt and fails the flushes it is told to. */
  final class RecordingSink implements BatchSink {
    final List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());
    final List<SinkException> failures = Collections.synchronizedList(new ArrayList<>());
    final List<Map<TopicPartition, OffsetAndMetadata>> committedAtFlush = Collections.synchronizedList(new ArrayList<>());

    @Override
    public Batch begin(int partition, long startOffset, long firstRecordTimestamp) {
      List<Long> offsets = new ArrayList<>();
      List<Long> times = new ArrayList<>();
      return new Batch() {
        @Override
        public void add(String tenant, WriteRequest request, long offset, long recordTimestamp) {
          assertThat(tenant).isEqualTo("tenant-a");
          offsets.add(offset);
          times.add(recordTimestamp);
        }

        @Override
        public void flush(long endOffset) throws SinkException {
          committedAtFlush.add(committed());
          if (!failures.isEmpty()) {
            attempts.add(new Attempt(partition, startOffset, firstRecordTimestamp, offsets, times, endOffset, false));
            throw failures.remove(0);
          }
          attempts.add(new Attempt(partition, startOffset, firstRecordTimestamp, offsets, times, endOffset, true));
        }

        @Override
        public void close() {}
      };
    }
  }

  BatchingConsumer start(BatchConfig config, BatchSink sink) {
    BatchingConsumer c = new BatchingConsumer(config, sink, new BatchMetrics(registry, "batch"),
        System::currentTimeMillis);
    consumers.add(c);
    c.start();
    return c;
  }

  BatchConfig config(List<Integer> partitions) {
    return BatchConfig.defaults(broker.bootstrap(), topic, group, partitions)
        .withInterval(Duration.ofHours(1), Duration.ZERO).withLookback(Duration.ofDays(2));
  }

  Map<TopicPartition, OffsetAndMetadata> committed() {
    try (Admin admin = broker.admin()) {
      return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  long committed(int partition) {
    OffsetAndMetadata om = committed().get(new TopicPartition(topic, partition));
    return om == null ? -1 : om.offset();
  }

  double counter(String name, String... tags) {
    var c = registry.find(name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void cyclesFollowHourSpansRoundRobinAndCommitThePartitionEnds() throws Exception {
    broker.createTopic(topic, 2);
    long from = (System.currentTimeMillis() / HOUR - 5) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int n0 = backlog.produce(topic, 0, "tenant-a", 5, from, from + 3 * HOUR, 60_000);
    int n1 = backlog.produce(topic, 1, "tenant-a", 5, from + HOUR, from + 4 * HOUR, 60_000);
    RecordingSink sink = new RecordingSink();
    start(config(List.of(0, 1)), sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(0) == n0 && committed(1) == n1);

    List<Attempt> cycles = List.copyOf(sink.attempts);
    assertThat(cycles).hasSize(6).allMatch(Attempt::flushed);
    // Round-robin: both partitions lag the whole time, so they alternate.
    assertThat(cycles.stream().map(Attempt::partition).toList()).containsExactly(0, 1, 0, 1, 0, 1);
    for (int p = 0; p < 2; p++) {
      long expectedStart = 0;
      for (Attempt a : cycles) {
        if (a.partition() != p) {
          continue;
        }
        // Each cycle starts where the previous one ended, holds one whole aligned hour of records.
        assertThat(a.start()).isEqualTo(expectedStart);
        assertThat(a.offsets()).hasSize(60);
        assertThat(a.offsets().get(0)).isEqualTo(a.start());
        assertThat(a.end()).isEqualTo(a.offsets().get(a.offsets().size() - 1) + 1);
        long hour = a.firstTs() / HOUR;
        assertThat(a.recordTimes()).allMatch(t -> t / HOUR == hour);
        expectedStart = a.end();
      }
    }
    assertThat(counter("weir.batch.cycles", "partition", "0")).isEqualTo(3);
    assertThat(registry.get("weir.batch.lag.records").tag("partition", "1").gauge().value()).isZero();
    // Kafka's own tool sees the same offsets, with no lag.
    String described = broker.describeGroup(group);
    assertThat(described).containsPattern(topic + "\\s+0\\s+" + n0 + "\\s+" + n0 + "\\s+0");
    assertThat(described).containsPattern(topic + "\\s+1\\s+" + n1 + "\\s+" + n1 + "\\s+0");
  }

  @Test
  void retryableFlushFailuresRedoTheCycleAndCommitOnceAfterSuccess() throws Exception {
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 3) * HOUR;
    int n = new Backlog(broker.bootstrap()).produce(topic, 0, "tenant-a", 3, from, from + HOUR / 2, 60_000);
    RecordingSink sink = new RecordingSink();
    sink.failures.add(new SinkException("upload", "bucket unavailable", true));
    sink.failures.add(new SinkException("upload", "bucket unavailable again", true));
    start(config(List.of(0)), sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(0) == n);

    assertThat(sink.attempts).hasSize(3);
    assertThat(sink.attempts.stream().map(Attempt::flushed).toList()).containsExactly(false, false, true);
    // Every attempt is the same cycle: same start, first record, records and end.
    Attempt last = sink.attempts.get(2);
    for (Attempt a : sink.attempts) {
      assertThat(a.start()).isZero();
      assertThat(a.firstTs()).isEqualTo(last.firstTs());
      assertThat(a.offsets()).isEqualTo(last.offsets());
      assertThat(a.end()).isEqualTo(n);
    }
    // Nothing was committed before the successful flush, and the commit happened once.
    assertThat(sink.committedAtFlush).allMatch(Map::isEmpty);
    assertThat(counter("weir.batch.cycles", "partition", "0")).isEqualTo(1);
    assertThat(counter("weir.batch.flush.failures", "kind", "upload", "retryable", "true")).isEqualTo(2);
  }

  @Test
  void aNonRetryableFlushErrorStopsTheConsumerWithTheOffsetWhereItWas() throws Exception {
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 4) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int first = backlog.produce(topic, 0, "tenant-a", 2, from, from + HOUR, 300_000);
    int second = backlog.produce(topic, 0, "tenant-a", 2, from + HOUR, from + 2 * HOUR, 300_000);
    RecordingSink sink = new RecordingSink();
    BatchingConsumer c = start(config(List.of(0)), sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(0) == first + second);
    c.close();

    // A new span arrives; its flush fails for good.
    int third = backlog.produce(topic, 0, "tenant-a", 2, from + 2 * HOUR, from + 3 * HOUR, 300_000);
    RecordingSink failing = new RecordingSink();
    failing.failures.add(new SinkException("permission", "permission denied", false));
    BatchingConsumer c2 = start(config(List.of(0)), failing);
    await().atMost(60, TimeUnit.SECONDS).until(() -> !c2.running());
    assertThat(c2.failure()).contains("permission denied").contains("partition 0");
    assertThat(committed(0)).isEqualTo(first + second);
    assertThat(failing.attempts).hasSize(1);
    assertThat(failing.attempts.get(0).offsets()).hasSize(third);
    assertThat(counter("weir.batch.flush.failures", "kind", "permission", "retryable", "false")).isEqualTo(1);
  }

  @Test
  void undecodableRecordsGoToTheDeadLetterTopicAndTheRestIsFlushed() throws Exception {
    broker.createTopic(topic, 1);
    String dlq = topic + "-dlq";
    broker.createTopic(dlq, 1);
    long t = (System.currentTimeMillis() / HOUR - 2) * HOUR;
    WriteRequest empty = WriteRequest.getDefaultInstance();
    try (KafkaProducer<byte[], byte[]> p = Backlog.producer(broker.bootstrap())) {
      p.send(Backlog.record(topic, 0, t, "tenant-a", empty)).get();
      ProducerRecord<byte[], byte[]> garbage = new ProducerRecord<>(topic, 0, t + 1, "tenant-a".getBytes(),
          new byte[] {(byte) 0xff, 0x13, 0x37});
      garbage.headers().add(new RecordHeader("weir-version", "1".getBytes(StandardCharsets.UTF_8)));
      p.send(garbage).get();
      ProducerRecord<byte[], byte[]> future = new ProducerRecord<>(topic, 0, t + 2, "tenant-a".getBytes(),
          empty.toByteArray());
      future.headers().add(new RecordHeader("weir-version", "99".getBytes(StandardCharsets.UTF_8)));
      p.send(future).get();
      p.send(Backlog.record(topic, 0, t + 3, "tenant-a", empty)).get();
    }
    RecordingSink sink = new RecordingSink();
    start(config(List.of(0)).withDeadLetterTopic(dlq), sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(0) == 4);
    assertThat(sink.attempts).hasSize(1);
    assertThat(sink.attempts.get(0).offsets()).containsExactly(0L, 3L);
    assertThat(counter("weir.batch.records.skipped", "partition", "0", "reason", "undecodable_record")).isEqualTo(1);
    assertThat(counter("weir.batch.records.skipped", "partition", "0", "reason", "unknown_record_version"))
        .isEqualTo(1);

    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<ConsumerRecord<byte[], byte[]>> dead = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
      TopicPartition tp = new TopicPartition(dlq, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      await().atMost(30, TimeUnit.SECONDS).until(() -> {
        c.poll(Duration.ofMillis(200)).forEach(dead::add);
        return dead.size() >= 2;
      });
    }
    assertThat(dead).hasSize(2);
    assertThat(new String(dead.get(0).headers().lastHeader("weir-dlq-source-offset").value())).isEqualTo("1");
    assertThat(new String(dead.get(1).headers().lastHeader("weir-dlq-source-offset").value())).isEqualTo("2");
    assertThat(dead.get(0).value()).containsExactly((byte) 0xff, 0x13, 0x37);
  }

  @Test
  void aSpanStillFillingWaitsUnlessEnoughRecordsAreWaiting() throws Exception {
    broker.createTopic(topic, 1);
    long now = System.currentTimeMillis();
    AtomicInteger produced = new AtomicInteger();
    try (KafkaProducer<byte[], byte[]> p = Backlog.producer(broker.bootstrap())) {
      for (int i = 0; i < 5; i++) {
        p.send(Backlog.record(topic, 0, now + i, "tenant-a", WriteRequest.getDefaultInstance())).get();
        produced.incrementAndGet();
      }
    }
    RecordingSink sink = new RecordingSink();
    // The current hour is not over: only a full cycle of 3 records may go.
    BatchConfig cfg = BatchConfig.defaults(broker.bootstrap(), topic, group, List.of(0))
        .withInterval(Duration.ofHours(1), Duration.ofMinutes(15)).withLimits(3, 0, Duration.ofMinutes(1))
        .withLookback(Duration.ofDays(1));
    BatchingConsumer c = start(cfg, sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(0) == 3);
    await().atMost(30, TimeUnit.SECONDS).until(() ->
        registry.get("weir.batch.lag.records").tag("partition", "0").gauge().value() == 2);
    assertThat(registry.get("weir.batch.lag.seconds").tag("partition", "0").gauge().value()).isGreaterThanOrEqualTo(0);
    c.close();
    assertThat(sink.attempts).hasSize(1);
    assertThat(committed(0)).isEqualTo(3);
  }

  @Test
  void aMissingDeadLetterTopicHoldsThePartitionAndIsANotReadyReasonUntilItIsCreated() throws Exception {
    broker.createTopic(topic, 1);
    String dlq = topic + "-dlq"; // not created; the broker does not auto-create topics
    long t = (System.currentTimeMillis() / HOUR - 2) * HOUR;
    try (KafkaProducer<byte[], byte[]> p = Backlog.producer(broker.bootstrap())) {
      p.send(Backlog.record(topic, 0, t, "tenant-a", WriteRequest.getDefaultInstance())).get();
      ProducerRecord<byte[], byte[]> garbage = new ProducerRecord<>(topic, 0, t + 1, "tenant-a".getBytes(),
          new byte[] {(byte) 0xff, 0x13, 0x37});
      garbage.headers().add(new RecordHeader("weir-version", "1".getBytes(StandardCharsets.UTF_8)));
      p.send(garbage).get();
      p.send(Backlog.record(topic, 0, t + 2, "tenant-a", WriteRequest.getDefaultInstance())).get();
    }
    RecordingSink sink = new RecordingSink();
    BatchingConsumer c = start(config(List.of(0)).withDeadLetterTopic(dlq), sink);
    await().atMost(60, TimeUnit.SECONDS).until(() -> c.notReadyReason() != null);
    assertThat(c.notReadyReason()).contains("dead-letter topic").contains(dlq).contains("does not exist");
    assertThat(committed(0)).isEqualTo(-1);
    assertThat(c.running()).isTrue();

    broker.createTopic(dlq, 1);
    await().atMost(90, TimeUnit.SECONDS).until(() -> committed(0) == 3);
    assertThat(c.notReadyReason()).isNull();
    assertThat(sink.attempts.stream().filter(Attempt::flushed).toList()).hasSize(1);
    assertThat(sink.attempts.stream().filter(Attempt::flushed).findFirst().orElseThrow().offsets())
        .containsExactly(0L, 2L);
  }
}
