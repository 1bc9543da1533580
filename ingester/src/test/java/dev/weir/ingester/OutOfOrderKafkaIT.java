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
import dev.weir.storage.testing.KafkaBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka mode, an ingester that was down for hours: the partition holds six hours of records
 * (record timestamps = produce time, from 6 h ago in 1-minute steps) whose samples are at their
 * record's time and, for every series, also 20.5 minutes before it: out of order, inside the 30-minute
 * window relative to what had been written then. The ingester starts hours after the last record,
 * replays the backlog, and refuses nothing; every sample is found exactly once; after
 * {@code /ingester/flush} the out-of-order samples are in blocks and still found exactly once.
 */
class OutOfOrderKafkaIT {
  static final String TENANT = "late";
  static final int SERIES = 20;
  static final int RECORDS = 360;
  static final long STEP_MS = 60_000;
  /** How much older than its record the late sample of each series is (between two in-order ones). */
  static final long LATE_MS = 20 * 60_000 + 30_000;

  @TempDir Path dir;

  @Test
  void aBacklogHoursOldWithOutOfOrderSamplesIsReplayedWithoutRefusingAnything() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long first = System.currentTimeMillis() - 8 * 3_600_000L; // the last record is 2 h old when read
    Map<String, Map<Long, Double>> produced = produce(c, first);

    try (WeirProcess ingester = WeirProcess.launch(dir.resolve("ingester"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-0", "--ingester.out-of-order-time-window=30m",
        "--blocks-storage.tsdb.ship-interval=0"))) {
      ingester.awaitReady(Duration.ofSeconds(90));
      await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> assertThat(found(ingester)).isEqualTo(produced));
      long total = produced.values().stream().mapToLong(Map::size).sum();
      assertThat(total).isEqualTo(SERIES * (2L * RECORDS));
      assertThat(ingester.metricSum(n -> n.equals("weir_discarded_samples_total"))).as("nothing refused")
          .isIn(Double.NaN, 0.0);
      assertThat(ingester.metric("weir_ingester_out_of_order_samples_appended_total{user=\"" + TENANT + "\"}"))
          .as("every late sample went to the out-of-order head").isEqualTo(SERIES * (double) RECORDS);

      // a flush is for a drained partition: INACTIVE first (as a downscale does)
      KafkaCluster.awaitActivePartitions(ingester, 1);
      assertThat(post(ingester, "/ingester/prepare-partition-downscale").statusCode()).isEqualTo(200);
      HttpResponse<String> flush = post(ingester, "/ingester/flush");
      assertThat(flush.statusCode()).as(flush.body()).isEqualTo(200);
      assertThat(ingester.log()).contains("out-of-order head compacted into block");
      assertThat(found(ingester)).as("from blocks, each sample once").isEqualTo(produced);
      Path wbl = dir.resolve("ingester/data/tsdb/" + TENANT + "/wbl");
      try (Stream<Path> segments = Files.list(wbl)) {
        assertThat(segments.mapToLong(p -> p.toFile().length()).sum()).as("WBL truncated after compaction").isZero();
      }
    }
  }

  /** Produces the backlog with explicit record timestamps; returns what it wrote. */
  private static Map<String, Map<Long, Double>> produce(KafkaCluster c, long first) throws Exception {
    Map<String, Map<Long, Double>> out = new TreeMap<>();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.broker.bootstrap());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int r = 0; r < RECORDS; r++) {
        long recordTime = first + r * STEP_MS;
        WriteRequest.Builder b = WriteRequest.newBuilder();
        for (int s = 0; s < SERIES; s++) {
          b.addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("late_test"))
              .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
              .addSamples(Sample.newBuilder().setTimestamp(recordTime).setValue(recordTime / 1000.0 + s))
              .addSamples(Sample.newBuilder().setTimestamp(recordTime - LATE_MS - s)
                  .setValue(-(recordTime / 1000.0) - s)));
          Map<Long, Double> m = out.computeIfAbsent(labels(s), k -> new TreeMap<>());
          m.put(recordTime, recordTime / 1000.0 + s);
          m.put(recordTime - LATE_MS - s, -(recordTime / 1000.0) - s);
        }
        // a record without the version header is a version-1 record: a WriteRequest
        producer.send(new ProducerRecord<>(c.topic, 0, recordTime, TENANT.getBytes(StandardCharsets.UTF_8),
            b.build().toByteArray()));
      }
      producer.flush();
    }
    return out;
  }

  private static HttpResponse<String> post(WeirProcess w, String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(w.httpUrl() + path))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String labels(int s) {
    return "{__name__=\"late_test\",series=\"" + s + "\"}";
  }

  private static Map<String, Map<Long, Double>> found(WeirProcess ingester) throws Exception {
    Map<String, Map<Long, Double>> out = new TreeMap<>();
    for (ExportClient.Series s : new ExportClient(ingester.httpUrl()).export(TENANT, "{__name__=\"late_test\"}")
        .values()) {
      Map<Long, Double> m = new TreeMap<>();
      for (int i = 0; i < s.timestamps().size(); i++) {
        assertThat(m.put(s.timestamps().get(i), s.values().get(i))).as("a sample found twice").isNull();
      }
      out.put(s.labels(), m);
    }
    return out;
  }
}
