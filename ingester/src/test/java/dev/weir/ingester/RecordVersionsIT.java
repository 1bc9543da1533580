package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.ingest.RecordFormat;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.testing.Rw2Requests;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Kafka record format versions on a real broker: records without the version header (written
 * before it existed), records of a version-1 and of a version-2 distributor in one partition, and a
 * rolling upgrade (the reader restarts, then the version-1 writer is rolled to version 2) — the
 * ingester reads every version, and every acknowledged sample is found exactly once.
 */
class RecordVersionsIT {
  static final String TENANT = "roll";
  static final int SERIES = 40;

  @TempDir Path dir;
  final HttpClient http = HttpClient.newHttpClient();
  /** Series label text → acknowledged samples (timestamp → value). */
  final Map<String, Map<Long, Double>> acked = new TreeMap<>();
  long next = System.currentTimeMillis() - 3_600_000;

  @Test
  void everyRecordVersionInOnePartitionIsReadAndARollingUpgradeLosesNothing() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    produceWithoutVersionHeader(c);
    WeirProcess ingester = WeirProcess.launch(dir.resolve("ingester"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-0"));
    WeirProcess d1 = null;
    WeirProcess d2 = null;
    try {
      ingester.awaitReady(Duration.ofSeconds(90));
      d1 = distributor(c, "d1", 1);
      d2 = distributor(c, "d2", 2);
      for (int round = 0; round < 3; round++) {
        // Both protocols through both writers: a 1.0 body becomes a v2 record and the reverse.
        writeV1(d1);
        writeV2(d1);
        writeV1(d2);
        writeV2(d2);
      }
      // Roll the reader while both versions are in the partition and more arrive.
      ingester.terminate(Duration.ofSeconds(60));
      writeV1(d1);
      writeV2(d2);
      ingester.restart();
      // Roll the version-1 writer to version 2.
      d1.close();
      d1 = distributor(c, "d1-rolled", 2);
      writeV1(d1);
      writeV2(d1);
      writeV2(d2);
      writePartlyInvalidV2(d2);

      WeirProcess reader = ingester;
      await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> assertThat(found(reader)).isEqualTo(acked));
      long ackedSamples = acked.values().stream().mapToLong(Map::size).sum();
      assertThat(ackedSamples).isEqualTo(SERIES * 2L * (1 + 4 * 3 + 2 + 3) + 10);
      assertThat(reader.metric("weir_ingest_storage_reader_records_processed_total{outcome=\"client_error\","
          + "partition=\"0\"}")).isZero();
      HttpResponse<String> meta = http.send(HttpRequest.newBuilder(URI.create(reader.httpUrl()
          + "/api/v1/metadata?metric=versions_info")).header("X-Scope-OrgID", TENANT).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(meta.body()).contains("Only metadata.");
      assertThat(found(reader)).as("the metadata-only series stored nothing").isEqualTo(acked);
      Map<String, Integer> versions = versionsInPartition(c);
      assertThat(versions).containsOnlyKeys("none", "1", "2");
      assertThat(versions.get("none")).isEqualTo(1);
      assertThat(versions.get("1")).isEqualTo(3 * 2 + 1);
      assertThat(versions.get("2")).isEqualTo(3 * 2 + 1 + 3 + 1);
    } finally {
      for (WeirProcess w : new WeirProcess[] {d1, d2, ingester}) {
        if (w != null) {
          w.close();
        }
      }
    }
  }

  WeirProcess distributor(KafkaCluster c, String name, int version) throws Exception {
    WeirProcess d = WeirProcess.start(dir.resolve(name), c.args("--target=distributor",
        "--ingest-storage.kafka.producer-record-version=" + version));
    await().atMost(30, TimeUnit.SECONDS).until(() -> d.get("/ingester/partition-ring").contains("<td>ACTIVE</td>"));
    return d;
  }

  /** The next batch: every series gets two new samples. */
  List<long[]> nextSamples() {
    List<long[]> out = new ArrayList<>();
    for (int s = 0; s < SERIES; s++) {
      out.add(new long[] {s, next, next + 1_000});
    }
    next += 2_000;
    return out;
  }

  static String labels(int s) {
    return "{__name__=\"versions\",job=\"j\",series=\"" + s + "\"}";
  }

  static double value(long ts, int s) {
    return ts % 100_000 + s / 8.0;
  }

  WriteRequest v1Request(List<long[]> samples) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (long[] x : samples) {
      int s = (int) x[0];
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("versions"))
          .addLabels(Label.newBuilder().setName("job").setValue("j"))
          .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
          .addSamples(Sample.newBuilder().setTimestamp(x[1]).setValue(value(x[1], s)))
          .addSamples(Sample.newBuilder().setTimestamp(x[2]).setValue(value(x[2], s))));
    }
    return b.build();
  }

  void ack(List<long[]> samples) {
    for (long[] x : samples) {
      int s = (int) x[0];
      Map<Long, Double> m = acked.computeIfAbsent(labels(s), k -> new TreeMap<>());
      m.put(x[1], value(x[1], s));
      m.put(x[2], value(x[2], s));
    }
  }

  void produceWithoutVersionHeader(KafkaCluster c) throws Exception {
    List<long[]> samples = nextSamples();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.broker.bootstrap());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.send(new ProducerRecord<>(c.topic, 0, TENANT.getBytes(StandardCharsets.UTF_8),
          v1Request(samples).toByteArray())).get();
    }
    ack(samples);
  }

  void writeV1(WeirProcess d) throws Exception {
    List<long[]> samples = nextSamples();
    // Metadata of a family without series here: a v2 record carries it on a series without samples.
    WriteRequest req = v1Request(samples).toBuilder().addMetadata(dev.weir.proto.prompb.MetricMetadata.newBuilder()
        .setMetricFamilyName("versions_info").setType(dev.weir.proto.prompb.MetricMetadata.MetricType.GAUGE)
        .setHelp("Only metadata.")).build();
    HttpResponse<String> r = post(d, Snappy.compress(req.toByteArray()), "application/x-protobuf");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    ack(samples);
  }

  void writeV2(WeirProcess d) throws Exception {
    List<long[]> samples = nextSamples();
    Rw2Requests req = new Rw2Requests();
    for (long[] x : samples) {
      int s = (int) x[0];
      req.add(req.series("__name__", "versions", "job", "j", "series", String.valueOf(s))
          .addSamples(dev.weir.proto.writev2.Sample.newBuilder().setTimestamp(x[1]).setValue(value(x[1], s)))
          .addSamples(dev.weir.proto.writev2.Sample.newBuilder().setTimestamp(x[2]).setValue(value(x[2], s))));
    }
    HttpResponse<String> r = post(d, Snappy.compress(req.build().toByteArray()),
        "application/x-protobuf;proto=io.prometheus.write.v2.Request");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue(
        String.valueOf(2 * SERIES));
    ack(samples);
  }

  /**
   * Through a Kafka distributor: valid series, one with a symbol reference out of range, one with a
   * native histogram (stored), an exemplar on a valid series and one on the refused series; the 400
   * says exactly how many samples, histograms and exemplars went to Kafka.
   */
  void writePartlyInvalidV2(WeirProcess d) throws Exception {
    List<long[]> samples = nextSamples().subList(0, 5);
    Rw2Requests req = new Rw2Requests();
    for (long[] x : samples) {
      int s = (int) x[0];
      var series = req.series("__name__", "versions", "job", "j", "series", String.valueOf(s))
          .addSamples(dev.weir.proto.writev2.Sample.newBuilder().setTimestamp(x[1]).setValue(value(x[1], s)))
          .addSamples(dev.weir.proto.writev2.Sample.newBuilder().setTimestamp(x[2]).setValue(value(x[2], s)));
      if (x == samples.get(0)) {
        series.addExemplars(dev.weir.proto.writev2.Exemplar.newBuilder().addLabelsRefs(req.ref("trace_id"))
            .addLabelsRefs(req.ref("kafka-v2")).setValue(value(x[2], s)).setTimestamp(x[2]));
      }
      req.add(series);
    }
    req.add(req.series("__name__", "versions", "job").addLabelsRefs(777)
        .addSamples(dev.weir.proto.writev2.Sample.newBuilder().setTimestamp(next).setValue(1))
        .addExemplars(dev.weir.proto.writev2.Exemplar.newBuilder().addLabelsRefs(req.ref("trace_id"))
            .addLabelsRefs(req.ref("refused")).setValue(1).setTimestamp(next)));
    req.add(req.series("__name__", "versions_histogram", "job", "j")
        .addHistograms(Rw2Requests.intHistogram(next)));
    HttpResponse<String> r = post(d, Snappy.compress(req.build().toByteArray()),
        "application/x-protobuf;proto=io.prometheus.write.v2.Request");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).contains("symbol reference 777 is out of range");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("10");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Histograms-Written")).hasValue("1");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Exemplars-Written")).hasValue("1");
    ack(samples);
  }

  HttpResponse<String> post(WeirProcess d, byte[] body, String type) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(d.httpUrl() + "/api/v1/push"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("X-Scope-OrgID", TENANT)
        .header("Content-Encoding", "snappy").header("Content-Type", type).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static Map<String, Map<Long, Double>> found(WeirProcess ingester) throws Exception {
    Map<String, Map<Long, Double>> out = new TreeMap<>();
    for (ExportClient.Series s : new ExportClient(ingester.httpUrl()).export(TENANT, "{__name__=\"versions\"}")
        .values()) {
      Map<Long, Double> m = new TreeMap<>();
      for (int i = 0; i < s.timestamps().size(); i++) {
        assertThat(m.put(s.timestamps().get(i), s.values().get(i))).as("a sample found twice").isNull();
      }
      out.put(s.labels(), m);
    }
    return out;
  }

  /** Records of partition 0 by version header ("none" without one). */
  static Map<String, Integer> versionsInPartition(KafkaCluster c) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.broker.bootstrap());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    Map<String, Integer> out = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(c.topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      while (consumer.position(tp) < end) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
          var h = r.headers().lastHeader(RecordFormat.VERSION_HEADER);
          out.merge(h == null ? "none" : new String(h.value(), StandardCharsets.UTF_8), 1, Integer::sum);
        }
      }
    }
    return out;
  }
}
