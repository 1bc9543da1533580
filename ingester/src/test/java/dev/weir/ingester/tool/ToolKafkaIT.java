package dev.weir.ingester.tool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.RecordFormat;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.testing.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Kafka subcommands in-process against the shared test broker, one topic per test. */
class ToolKafkaIT {
  /** Record timestamps start an hour ago: older ones could fall to the broker's time-based retention. */
  static final long T0 = (System.currentTimeMillis() - 3_600_000) / 1000 * 1000;
  KafkaBroker broker;
  String topic;
  KafkaProducer<byte[], byte[]> producer;

  @BeforeEach
  void setUp() throws Exception {
    broker = KafkaBroker.shared();
    topic = "tool-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(topic, 2);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    producer = new KafkaProducer<>(p);
  }

  @AfterEach
  void tearDown() {
    producer.close();
  }

  private ToolRun tool(String... args) {
    List<String> a = new ArrayList<>(List.of(args));
    a.add(1, "--kafka.address=" + broker.bootstrap());
    return ToolRun.of(a.toArray(String[]::new));
  }

  /** Produces a record with the version header and an explicit timestamp; returns its offset. */
  private long produce(String t, int partition, long ts, String key, byte[] value) throws Exception {
    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(t, partition, ts, key.getBytes(StandardCharsets.UTF_8),
        value);
    r.headers().add(new RecordHeader(RecordFormat.VERSION_HEADER, "1".getBytes(StandardCharsets.UTF_8)));
    return producer.send(r).get().offset();
  }

  static WriteRequest request(String name, long ts, double... values) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < values.length; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue(name))
          .addLabels(Label.newBuilder().setName("job").setValue("job-" + s))
          .addSamples(Sample.newBuilder().setTimestamp(ts).setValue(values[s]))
          .addSamples(Sample.newBuilder().setTimestamp(ts + 15_000).setValue(values[s] * 2)));
    }
    return b.build();
  }

  /** Every record of a partition, read by a group-less consumer. */
  private List<ConsumerRecord<byte[], byte[]>> records(String t, int partition) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(t, partition);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long end = c.endOffsets(List.of(tp)).get(tp);
      while (c.position(tp) < end) {
        c.poll(Duration.ofMillis(200)).records(tp).forEach(out::add);
      }
    }
    return out;
  }

  private void commit(String group, int partition, long offset) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(topic, partition);
      c.assign(List.of(tp));
      c.commitSync(Map.of(tp, new OffsetAndMetadata(offset)));
    }
  }

  @Test
  void offsetsReportsStartEndCommittedAndLagExactly() throws Exception {
    for (int i = 0; i < 10; i++) {
      produce(topic, 0, T0 + i * 1000L, "t", request("m", i, i).toByteArray());
    }
    for (int i = 0; i < 3; i++) {
      produce(topic, 1, T0 + i * 1000L, "t", request("m", i, i).toByteArray());
    }
    commit("g1", 0, 6);
    commit("g2", 0, 10);
    commit("g2", 1, 1);

    ToolRun plain = tool("offsets", "--topic", topic);
    assertThat(plain.code()).as(plain.toString()).isZero();
    assertThat(plain.lines()).extracting(JsonNode::toString).containsExactly(
        "{\"topic\":\"" + topic + "\",\"partition\":0,\"start\":0,\"end\":10}",
        "{\"topic\":\"" + topic + "\",\"partition\":1,\"start\":0,\"end\":3}");

    ToolRun groups = tool("offsets", "--topic", topic, "--group", "g1", "--group", "g2");
    assertThat(groups.code()).as(groups.toString()).isZero();
    assertThat(groups.lines()).extracting(n -> n.get("partition") + " " + n.get("group").asText() + " "
        + n.get("committed") + " " + n.get("lag") + " " + n.get("lag_ms")).containsExactly(
        "0 g1 6 4 4000", // newest record (offset 9) − the last committed one (offset 5)
        "0 g2 10 0 0",
        "1 g1 null null null", // g1 never committed partition 1
        "1 g2 1 2 2000");
  }

  @Test
  void offsetsOfAnEmptyPartitionHaveNoLag() throws Exception {
    produce(topic, 0, T0, "t", request("m", 1, 1).toByteArray());
    commit("g", 1, 0);
    ToolRun r = tool("offsets", "--topic", topic, "--group", "g");
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines().get(1).toString()).isEqualTo("{\"topic\":\"" + topic + "\",\"partition\":1,\"start\":0,"
        + "\"end\":0,\"group\":\"g\",\"committed\":0,\"lag\":0,\"lag_ms\":0}");
  }

  @Test
  void offsetsNamesAMissingTopicOrGroup() throws Exception {
    produce(topic, 0, T0, "t", request("m", 1, 1).toByteArray());
    ToolRun noTopic = tool("offsets", "--topic", topic + "-missing");
    assertThat(noTopic.code()).isEqualTo(1);
    assertThat(noTopic.err().strip()).isEqualTo("weir tool offsets: topic " + topic + "-missing does not exist");
    ToolRun noGroup = tool("offsets", "--topic", topic, "--group", "nobody");
    assertThat(noGroup.code()).isEqualTo(1);
    assertThat(noGroup.err()).contains("consumer group nobody has no committed offset in topic " + topic);
    assertThat(noGroup.out()).isEmpty();
  }

  @Test
  void dumpRoundTripsRecordsOfTheRealWriter() throws Exception {
    try (Writer w = new Writer(KafkaConfig.defaults(broker.bootstrap(), topic, "unused"),
        new WriterMetrics(new SimpleMeterRegistry()))) {
      w.write("tenant-1", Map.of(0, request("up", 1000, 1.5, -2)));
      w.write("tenant-2", Map.of(0, request("temp", 2000, Double.NaN)));
    }
    ToolRun r = tool("dump", "--topic", topic, "--partition", "0");
    assertThat(r.code()).as(r.toString()).isZero();
    List<JsonNode> lines = r.lines();
    assertThat(lines).hasSize(2);
    JsonNode first = lines.get(0);
    assertThat(first.get("offset").asLong()).isZero();
    assertThat(first.get("timestamp").asLong()).isEqualTo(records(topic, 0).get(0).timestamp());
    assertThat(first.get("tenant").asText()).isEqualTo("tenant-1");
    assertThat(first.get("version").asText()).isEqualTo("1");
    assertThat(first.get("series").toString()).isEqualTo(
        "[{\"labels\":{\"__name__\":\"up\",\"job\":\"job-0\"},\"samples\":[[1000,1.5],[16000,3]]},"
            + "{\"labels\":{\"__name__\":\"up\",\"job\":\"job-1\"},\"samples\":[[1000,-2],[16000,-4]]}]");
    assertThat(lines.get(1).get("tenant").asText()).isEqualTo("tenant-2");
    assertThat(lines.get(1).get("series").toString()).isEqualTo(
        "[{\"labels\":{\"__name__\":\"temp\",\"job\":\"job-0\"},\"samples\":[[2000,\"NaN\"],[17000,\"NaN\"]]}]");
  }

  @Test
  void dumpShowsEachRecordsVersionAndDecodesVersionTwoAndHeaderlessRecords() throws Exception {
    WriteRequest req = request("up", 1000, 1.5, -2);
    try (Writer w = new Writer(KafkaConfig.defaults(broker.bootstrap(), topic, "unused").withProducerRecordVersion(2),
        new WriterMetrics(new SimpleMeterRegistry()))) {
      w.write("tenant-1", Map.of(0, req));
    }
    producer.send(new ProducerRecord<>(topic, 0, "tenant-2".getBytes(StandardCharsets.UTF_8), req.toByteArray()))
        .get();
    ToolRun r = tool("dump", "--topic", topic, "--partition", "0");
    assertThat(r.code()).as(r.toString()).isZero();
    List<JsonNode> lines = r.lines();
    assertThat(lines).hasSize(2);
    assertThat(lines).extracting(n -> n.get("version").asText()).containsExactly("2", "1");
    assertThat(records(topic, 0).get(0).headers().lastHeader(RecordFormat.VERSION_HEADER).value())
        .isEqualTo("2".getBytes(StandardCharsets.UTF_8));
    String series = "[{\"labels\":{\"__name__\":\"up\",\"job\":\"job-0\"},\"samples\":[[1000,1.5],[16000,3]]},"
        + "{\"labels\":{\"__name__\":\"up\",\"job\":\"job-1\"},\"samples\":[[1000,-2],[16000,-4]]}]";
    assertThat(lines.get(0).get("series").toString()).isEqualTo(series);
    assertThat(lines.get(1).get("series").toString()).isEqualTo(series);
    assertThat(lines.get(1).get("tenant").asText()).isEqualTo("tenant-2");
  }

  @Test
  void dumpHonoursOffsetAndTimeBoundaries() throws Exception {
    for (int i = 0; i < 5; i++) {
      produce(topic, 1, T0 + i * 1000L, "t", request("m", i, i).toByteArray());
    }
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--from-offset", "1", "--to-offset", "3")))
        .containsExactly(1L, 2L);
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--from-offset", "3"))).containsExactly(3L, 4L);
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--to-offset", "0"))).isEmpty();
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--from-time", String.valueOf(T0 + 1000),
        "--to-time", String.valueOf(T0 + 3000)))).containsExactly(1L, 2L);
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--from-time",
        Instant.ofEpochMilli(T0 + 3500).toString()))).containsExactly(4L);
    assertThat(offsets(tool("dump", "--topic", topic, "--partition", "1", "--from-time", String.valueOf(T0 + 9000))))
        .isEmpty();
  }

  private static List<Long> offsets(ToolRun r) {
    assertThat(r.code()).as(r.toString()).isZero();
    return r.lines().stream().map(n -> n.get("offset").asLong()).toList();
  }

  @Test
  void dumpReportsUndecodableRecordsAsErrorLinesAndGoesOn() throws Exception {
    produce(topic, 0, T0, "t", request("m", 1, 1).toByteArray());
    produce(topic, 0, T0, "t", new byte[] {(byte) 0xff, 0x01, 0x02});
    ProducerRecord<byte[], byte[]> unknownVersion = new ProducerRecord<>(topic, 0,
        "t".getBytes(StandardCharsets.UTF_8), request("m", 1, 1).toByteArray());
    unknownVersion.headers().add(RecordFormat.VERSION_HEADER, "99".getBytes(StandardCharsets.UTF_8));
    producer.send(unknownVersion).get();
    produce(topic, 0, T0, "t", request("m", 2, 2).toByteArray());

    ToolRun r = tool("dump", "--topic", topic, "--partition", "0");

    assertThat(r.code()).as(r.toString()).isZero();
    List<JsonNode> lines = r.lines();
    assertThat(lines).extracting(n -> n.get("offset").asLong()).containsExactly(0L, 1L, 2L, 3L);
    assertThat(lines.get(1).get("error").asText()).startsWith("undecodable_record: ");
    assertThat(lines.get(1).get("key").asText()).isEqualTo("t");
    assertThat(lines.get(2).get("error").asText()).startsWith("unknown_record_version: ");
    assertThat(lines.get(2).get("version").asText()).isEqualTo("99");
    assertThat(lines.get(3).get("series").get(0).get("samples").toString()).isEqualTo("[[2,2],[15002,4]]");
  }

  @Test
  void dumpNamesAnOffsetOutsideTheLogAndAMissingPartition() throws Exception {
    produce(topic, 0, T0, "t", request("m", 1, 1).toByteArray());
    ToolRun outside = tool("dump", "--topic", topic, "--partition", "0", "--from-offset", "5");
    assertThat(outside.code()).isEqualTo(1);
    assertThat(outside.err().strip()).isEqualTo("weir tool dump: --from-offset 5 is outside the log of " + topic
        + " partition 0: offsets [0, 1) (start inclusive, end exclusive)");
    ToolRun partition = tool("dump", "--topic", topic, "--partition", "7");
    assertThat(partition.code()).isEqualTo(1);
    assertThat(partition.err()).contains("topic " + topic + " has no partition 7 (it has 2: 0..1)");
  }

  @Test
  void findDuplicatesFindsInjectedDuplicatesAndNothingElse() throws Exception {
    byte[] v1 = request("m", 1, 1).toByteArray();
    byte[] v2 = request("m", 2, 2).toByteArray();
    produce(topic, 0, T0, "t1", v1); // 0: A
    produce(topic, 0, T0, "t1", v2); // 1: B
    produce(topic, 0, T0 + 5, "t1", v1); // 2: A again (another timestamp: still a duplicate)
    produce(topic, 0, T0, "t2", v1); // 3: same payload, other tenant: not a duplicate
    produce(topic, 0, T0, "t1", v2); // 4: B again
    produce(topic, 0, T0, "t1", v1); // 5: A again

    ToolRun r = tool("find-duplicates", "--topic", topic, "--partition", "0");

    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(r.lines()).extracting(n -> n.get("tenant").asText() + " " + n.get("count") + " " + n.get("offsets"))
        .containsExactly("t1 3 [0,2,5]", "t1 2 [1,4]");
    assertThat(r.err().strip()).isEqualTo("weir tool find-duplicates: 3 duplicate records in 2 groups among 6"
        + " records of " + topic + " partition 0 offsets [0, 6)");
    ToolRun clean = tool("find-duplicates", "--topic", topic, "--partition", "0", "--to-offset", "2");
    assertThat(clean.code()).as(clean.toString()).isZero();
    assertThat(clean.out()).isEmpty();
  }

  @Test
  void replayCopiesExactlyTheRangeToAnotherTopic() throws Exception {
    String dst = topic + "-dst";
    broker.createTopic(dst, 2);
    for (int i = 0; i < 10; i++) {
      ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, 0, T0 + i, ("t" + i % 3).getBytes(
          StandardCharsets.UTF_8), request("m", i, i).toByteArray());
      r.headers().add(RecordFormat.VERSION_HEADER, "1".getBytes(StandardCharsets.UTF_8));
      r.headers().add("n", new byte[] {(byte) i});
      producer.send(r).get();
    }

    ToolRun r = tool("replay", "--from-topic", topic, "--partition", "0", "--from-offset", "3", "--to-offset", "8",
        "--to-topic", dst, "--to-partition", "1");

    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines()).singleElement().extracting(JsonNode::toString).isEqualTo("{\"from_topic\":\"" + topic
        + "\",\"partition\":0,\"from_offset\":3,\"to_offset\":8,\"to_topic\":\"" + dst
        + "\",\"to_partition\":1,\"records\":5}");
    List<ConsumerRecord<byte[], byte[]>> src = records(topic, 0);
    List<ConsumerRecord<byte[], byte[]>> copied = records(dst, 1);
    assertThat(src).hasSize(10);
    assertThat(copied).hasSize(5);
    for (int i = 0; i < 5; i++) {
      ConsumerRecord<byte[], byte[]> want = src.get(3 + i);
      ConsumerRecord<byte[], byte[]> got = copied.get(i);
      assertThat(got.key()).isEqualTo(want.key());
      assertThat(got.value()).isEqualTo(want.value());
      assertThat(got.timestamp()).isEqualTo(want.timestamp());
      assertThat(got.headers().toArray()).isEqualTo(want.headers().toArray());
    }
    assertThat(records(dst, 0)).isEmpty();
    ToolRun same = tool("replay", "--from-topic", topic, "--partition", "0", "--to-topic", topic);
    assertThat(same.code()).isEqualTo(2);
    assertThat(same.err()).contains("refusing to write into the partition it reads");
    assertThat(records(topic, 0)).hasSize(10);
    // Another codec than the default lz4: the same records come back.
    ToolRun zstd = tool("replay", "--from-topic", topic, "--partition", "0", "--from-offset", "3", "--to-offset",
        "8", "--to-topic", dst, "--to-partition", "0", "--compression", "zstd");
    assertThat(zstd.code()).as(zstd.toString()).isZero();
    List<ConsumerRecord<byte[], byte[]>> viaZstd = records(dst, 0);
    assertThat(viaZstd).hasSize(5);
    for (int i = 0; i < 5; i++) {
      assertThat(viaZstd.get(i).value()).isEqualTo(src.get(3 + i).value());
    }
  }
}
