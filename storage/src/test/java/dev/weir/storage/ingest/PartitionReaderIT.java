package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.testing.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** The partition reader against a real Kafka broker. */
class PartitionReaderIT extends ReaderITBase {
  @Test
  void consumesInOrderPerSeriesCommitsAndResumesFromTheCommittedOffset() throws Exception {
    KafkaConfig cfg = config(4);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 500, 20);
    RecordingPusher p1 = new RecordingPusher();
    ReaderMetrics m1 = ReaderMetrics.noop(0);
    PartitionReader r1 = reader(cfg, p1, m1);
    await().atMost(60, TimeUnit.SECONDS).until(() -> p1.total.get() == 500 * 20);
    await().until(() -> committed(group) == 500);
    assertThat(m1.lastCommitted.get()).isEqualTo(500);
    assertThat(p1.orderViolations).isEmpty();
    assertThat(p1.samples).hasSize(20).allSatisfy((k, ts) -> assertThat(ts).hasSize(500));
    // The commit is visible at the broker a moment before the reader thread runs its catch-up check.
    await().atMost(30, TimeUnit.SECONDS).until(r1::caughtUp);
    assertThat(r1.notReadyReason()).isNull();
    stop(r1);

    produce(cfg, 500, 700, 20);
    RecordingPusher p2 = new RecordingPusher();
    reader(cfg, p2, ReaderMetrics.noop(0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> p2.total.get() == 200 * 20);
    await().until(() -> committed(group) == 700);
    assertThat(p2.samples.values()).allSatisfy(ts -> assertThat(ts.get(0)).as("resumed after the commit").isEqualTo(500));
    assertThat(broker().describeGroup(group)).contains(topic).containsPattern("\\s700\\s+700\\s+0\\s");
  }

  @Test
  void concurrentFetchersHandTheBacklogOverInOrderThenOneConsumerContinues() throws Exception {
    // A small buffer makes small windows: many windows, fetched by 3 consumers out of order.
    KafkaConfig cfg = config(2).withFetchConcurrency(3).withMaxBufferedBytes(64 << 10);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 3_000, 3);
    RecordingPusher p = new RecordingPusher();
    ReaderMetrics m = ReaderMetrics.noop(0);
    PartitionReader r = reader(cfg, p, m);
    await().atMost(120, TimeUnit.SECONDS).until(() -> p.total.get() == 3_000 * 3);
    assertThat(m.concurrentlyFetched.count()).as("the backlog came through the fetchers").isEqualTo(3_000);
    produce(cfg, 3_000, 3_200, 3);
    await().atMost(60, TimeUnit.SECONDS).until(() -> p.total.get() == 3_200 * 3);
    await().until(() -> committed(group) == 3_200);
    assertThat(m.concurrentlyFetched.count()).as("the rest through the reader's own consumer").isEqualTo(3_000);
    assertThat(p.orderViolations).isEmpty();
    assertThat(p.samples).hasSize(3).allSatisfy((k, ts) -> assertThat(ts).hasSize(3_200));
    assertThat(m.missedRecords.count()).isZero();
    assertThat(r.caughtUp()).isTrue();
  }

  @Test
  void concurrentFetchersAndThePipelineTogetherStayWithinMaxBufferedBytes() throws Exception {
    long max = 400_000;
    KafkaConfig cfg = config(2).withFetchConcurrency(4).withMaxBufferedBytes(max);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 3_000, 10); // ~300 bytes per record: ~0.9 MB, more than twice the bound
    RecordingPusher p = new RecordingPusher();
    p.delayMillis = 1; // storage slower than the fetchers: they must wait, not pile up
    io.micrometer.core.instrument.simple.SimpleMeterRegistry reg = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    ReaderMetrics m = new ReaderMetrics(reg, 0);
    reader(cfg, p, m);
    double peak = 0;
    double peakFetchers = 0;
    while (p.total.get() < 3_000 * 10) {
      double fetchers = reg.get("weir.ingest.storage.reader.fetcher.buffered.bytes").gauge().value();
      peakFetchers = Math.max(peakFetchers, fetchers);
      peak = Math.max(peak, fetchers + reg.get("weir.ingest.storage.reader.buffered.bytes").gauge().value());
      Thread.sleep(1);
    }
    assertThat(m.concurrentlyFetched.count()).isEqualTo(3_000);
    assertThat(peakFetchers).as("the fetchers held records").isPositive();
    // Each half stays within its half; the margin is the measurement: the two gauges are read one
    // after the other, so a window (max / 2 / 8 = 25 KB here) handed over in between counts twice.
    assertThat(peak).isLessThanOrEqualTo(max + (64 << 10));
    assertThat(p.orderViolations).isEmpty();
  }

  @Test
  void sequentialLoopConsumesToo() throws Exception {
    KafkaConfig cfg = config(0);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 300, 5);
    RecordingPusher p = new RecordingPusher();
    reader(cfg, p, ReaderMetrics.noop(0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> p.total.get() == 300 * 5);
    await().until(() -> committed(group) == 300);
    assertThat(p.orderViolations).isEmpty();
  }

  @Test
  void withoutACommitTheStartPositionDecidesAndTheOffsetFileIsTheFallback() throws Exception {
    KafkaConfig cfg = config(2);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 100, 1);
    RecordingPusher end = new RecordingPusher();
    PartitionReader r = reader(cfg.withStart("end", 0), end, ReaderMetrics.noop(0));
    await().until(r::caughtUp);
    produce(cfg, 100, 110, 1);
    await().until(() -> end.total.get() == 10);
    await().until(() -> committed(group) == 110);
    stop(r);
    assertThat(end.samples.values().iterator().next().get(0)).isEqualTo(100);

    // The broker "loses" the group: the offset file in the data dir resumes at the same place.
    try (Admin a = broker().admin()) {
      a.deleteConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS);
    }
    assertThat(committed(group)).isEqualTo(-1);
    produce(cfg, 110, 120, 1);
    RecordingPusher resumed = new RecordingPusher();
    reader(cfg, resumed, ReaderMetrics.noop(0));
    await().until(() -> resumed.total.get() == 10);
    assertThat(resumed.samples.values().iterator().next().get(0)).isEqualTo(110);

    // A fresh group with start position "timestamp": records from that time on.
    group = "g-" + UUID.randomUUID();
    dir = dir.resolve("other");
    RecordingPusher fromTs = new RecordingPusher();
    long ts;
    try (KafkaConsumer<byte[], byte[]> c = rawConsumer()) {
      c.assign(List.of(new TopicPartition(topic, 0)));
      c.seek(new TopicPartition(topic, 0), 50);
      ts = c.poll(Duration.ofSeconds(10)).iterator().next().timestamp();
    }
    reader(config(2).withStart("timestamp", ts), fromTs, ReaderMetrics.noop(0));
    await().until(() -> fromTs.total.get() > 0 && fromTs.samples.values().iterator().next().contains(119L));
    assertThat(fromTs.samples.values().iterator().next().get(0)).isLessThanOrEqualTo(50);
  }

  private KafkaConsumer<byte[], byte[]> rawConsumer() throws Exception {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker().bootstrap());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return new KafkaConsumer<>(p);
  }

  @Test
  void recordsDeletedBeforeTheyWereReadAreCountedAsMissed() throws Exception {
    KafkaConfig cfg = config(2);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 10, 1);
    RecordingPusher p = new RecordingPusher();
    PartitionReader r = reader(cfg, p, ReaderMetrics.noop(0));
    await().until(() -> committed(group) == 10);
    stop(r);
    produce(cfg, 10, 30, 1);
    try (Admin a = broker().admin()) {
      a.deleteRecords(Map.of(new TopicPartition(topic, 0),
          org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(25))).all().get(10, TimeUnit.SECONDS);
    }
    RecordingPusher after = new RecordingPusher();
    ReaderMetrics m = ReaderMetrics.noop(0);
    reader(cfg, after, m);
    await().until(() -> after.total.get() == 5);
    assertThat(m.missedRecords.count()).as("offsets 10..24 were deleted unread").isEqualTo(15);
    assertThat(after.samples.values().iterator().next().get(0)).isEqualTo(25);
  }

  @Test
  void poisonRecordsAreSkippedCountedAndSentToTheDeadLetterTopic() throws Exception {
    String dlq = "dlq-" + UUID.randomUUID();
    KafkaConfig cfg = config(4).withDeadLetterTopic(dlq);
    broker().createTopic(topic, 1);
    broker().createTopic(dlq, 1);
    produce(cfg, 0, 10, 3);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker().bootstrap());
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    try (KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(props)) {
      byte[] garbage = new byte[200];
      new Random(1).nextBytes(garbage);
      ProducerRecord<byte[], byte[]> r1 = new ProducerRecord<>(topic, 0, "tenant".getBytes(StandardCharsets.UTF_8), garbage);
      r1.headers().add(new RecordHeader(RecordFormat.VERSION_HEADER, "1".getBytes(StandardCharsets.UTF_8)));
      raw.send(r1).get();
      ProducerRecord<byte[], byte[]> r2 = new ProducerRecord<>(topic, 0, "tenant".getBytes(StandardCharsets.UTF_8),
          WriteRequest.getDefaultInstance().toByteArray());
      r2.headers().add(new RecordHeader(RecordFormat.VERSION_HEADER, "99".getBytes(StandardCharsets.UTF_8)));
      raw.send(r2).get();
    }
    // A record with an invalid series among valid ones: the valid ones are kept.
    try (Writer w = new Writer(cfg, WriterMetrics.noop())) {
      w.write("tenant", Map.of(0, WriteRequest.newBuilder()
          .addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("name").setValue("bad"))
              .addSamples(Sample.newBuilder().setTimestamp(10)))
          .build()));
    }
    produce(cfg, 11, 20, 3);
    RecordingPusher p = new RecordingPusher();
    io.micrometer.core.instrument.MeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    ReaderMetrics m = new ReaderMetrics(registry, 0);
    reader(cfg, p, m);
    await().atMost(60, TimeUnit.SECONDS).until(() -> p.total.get() == 19 * 3);
    await().until(() -> committed(group) == 22);
    assertThat(m.recordsClientError.count()).as("undecodable records skipped whole").isEqualTo(2);
    assertThat(m.recordsOk.count()).isEqualTo(20);
    assertThat(registry.get("weir.ingest.storage.reader.client.errors").tag("reason", "undecodable_record").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get("weir.ingest.storage.reader.client.errors").tag("reason", "unknown_record_version")
        .counter().count()).isEqualTo(1);
    assertThat(registry.get("weir.ingest.storage.reader.client.errors").tag("reason", "label_invalid").counter()
        .count()).isEqualTo(1);
    List<ConsumerRecord<byte[], byte[]>> dead = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = rawConsumer()) {
      c.assign(List.of(new TopicPartition(dlq, 0)));
      c.seekToBeginning(List.of(new TopicPartition(dlq, 0)));
      await().until(() -> {
        c.poll(Duration.ofMillis(500)).forEach(dead::add);
        return dead.size() == 2;
      });
    }
    assertThat(new String(dead.get(0).headers().lastHeader("weir-dlq-source-offset").value(), StandardCharsets.UTF_8))
        .isEqualTo("10");
    assertThat(new String(dead.get(1).headers().lastHeader("weir-dlq-source-offset").value(), StandardCharsets.UTF_8))
        .isEqualTo("11");
    assertThat(new String(dead.get(1).headers().lastHeader("weir-dlq-error").value(), StandardCharsets.UTF_8))
        .contains("\"99\" is not supported");
    assertThat(new String(dead.get(0).headers().lastHeader("weir-dlq-source-partition").value(), StandardCharsets.UTF_8))
        .isEqualTo("0");
  }

  @Test
  void aServerErrorHoldsTheCommittedOffsetUntilItClearsAndNothingIsSkipped() throws Exception {
    KafkaConfig cfg = config(4);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 100, 10);
    RecordingPusher p = new RecordingPusher();
    ReaderMetrics m = ReaderMetrics.noop(0);
    PartitionReader r = reader(cfg, p, m);
    await().until(() -> committed(group) == 100);
    p.failWhen = ts -> ts.getSamples(0).getTimestamp() >= 150 && ts.getLabels(1).getValue().equals("3");
    p.failing.set(true);
    produce(cfg, 100, 200, 10);
    await().atMost(30, TimeUnit.SECONDS).until(() -> p.serverErrors.get() >= 3);
    Thread.sleep(2_500); // more than two commit intervals: the offset must not move past 150
    long held = committed(group);
    assertThat(held).isBetween(100L, 150L);
    assertThat(m.lastCommitted.get()).isEqualTo(held);
    assertThat(r.notReadyReason()).isNull(); // retrying is not "broken"
    p.failing.set(false);
    await().atMost(30, TimeUnit.SECONDS).until(() -> committed(group) == 200);
    assertThat(p.samples).allSatisfy((k, ts) -> assertThat(ts).hasSize(200));
    assertThat(p.orderViolations).isEmpty();
    assertThat(m.retries.count()).isGreaterThanOrEqualTo(3);
  }

  @Test
  void aMissingTopicMakesTheReaderNotReadyUntilItExists() throws Exception {
    KafkaConfig cfg = config(2);
    RecordingPusher p = new RecordingPusher();
    PartitionReader r = reader(cfg, p, ReaderMetrics.noop(0));
    await().atMost(20, TimeUnit.SECONDS).until(() -> r.notReadyReason() != null
        && r.notReadyReason().contains("topic " + topic + " does not exist"));
    broker().createTopic(topic, 1);
    produce(cfg, 0, 5, 1);
    await().atMost(30, TimeUnit.SECONDS).until(() -> p.total.get() == 5);
    await().until(() -> r.notReadyReason() == null);
  }

  @Test
  void bufferedBytesStayBoundedWhileStorageIsSlow() throws Exception {
    KafkaConfig cfg = config(2).withMaxBufferedBytes(20_000);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 300, 10); // ~300 bytes per record: ~90 KB in all
    RecordingPusher p = new RecordingPusher();
    p.delayMillis = 5;
    io.micrometer.core.instrument.simple.SimpleMeterRegistry reg = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    reader(cfg, p, new ReaderMetrics(reg, 0));
    double max = 0;
    while (p.total.get() < 300 * 10) {
      max = Math.max(max, reg.get("weir.ingest.storage.reader.buffered.bytes").gauge().value());
      Thread.sleep(2);
    }
    assertThat(max).isPositive().isLessThanOrEqualTo(20_000 + 1_000);
  }

  @Test
  void strongReadWaitsForTheEndOffsetSeenWhenItArrived() throws Exception {
    KafkaConfig cfg = config(2);
    broker().createTopic(topic, 1);
    RecordingPusher p = new RecordingPusher();
    PartitionReader r = reader(cfg, p, ReaderMetrics.noop(0));
    await().until(r::caughtUp);
    produce(cfg, 0, 50, 2);
    long end = r.currentEndOffset();
    assertThat(end).isEqualTo(50);
    r.awaitApplied(end, Duration.ofSeconds(30));
    assertThat(p.total.get()).isEqualTo(100);
  }

  @Test
  void brokerRestartMidConsumptionLosesNothing() throws Exception {
    broker = KafkaBroker.start(dir.resolve("broker"));
    closeables.add(broker);
    KafkaConfig cfg = config(4);
    broker.createTopic(topic, 1);
    produce(cfg, 0, 200, 10);
    RecordingPusher p = new RecordingPusher();
    p.delayMillis = 2;
    reader(cfg, p, ReaderMetrics.noop(0));
    await().until(() -> p.total.get() > 0);
    broker.stop();
    Thread.sleep(3_000);
    broker.restart();
    produce(cfg, 200, 300, 10);
    await().atMost(90, TimeUnit.SECONDS).until(() -> committed(group) == 300);
    assertThat(p.samples).allSatisfy((k, ts) -> assertThat(ts.stream().distinct()).hasSize(300));
  }
}
