package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Exemplar;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Exemplars and metadata through real processes and a kill -9: remote write 1.0 requests shaped
 * as Prometheus sends them (samples and exemplars in separate series entries, metadata per
 * family) are acknowledged, the ingester is killed and restarted, and {@code
 * /api/v1/query_exemplars} returns exactly the acknowledged exemplars still inside the tenant's
 * limit (the newest ones), {@code /api/v1/metadata} the metadata — on the ingester and on a
 * querier that gathers them over gRPC. Once in classic mode (ring in etcd), once in Kafka mode
 * with record format v2 (exemplars and metadata travel inside the records).
 */
class ExemplarsAndMetadataIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final int LIMIT = 30;
  static final int SERIES = 4;
  static final int PUSHES = 12;

  @TempDir Path dir;

  private static Label label(String n, String v) {
    return Label.newBuilder().setName(n).setValue(v).build();
  }

  /** Push {@code k}: a sample per series, then an exemplar per series in entries of their own. */
  private static WriteRequest push(long base, int k, List<String> acked) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    long t = base + k * 1_000L;
    for (int s = 0; s < SERIES; s++) {
      b.addTimeseries(TimeSeries.newBuilder().addLabels(label("__name__", "ex_requests_total"))
          .addLabels(label("s", String.valueOf(s))).addSamples(Sample.newBuilder().setTimestamp(t).setValue(k)));
    }
    for (int s = 0; s < SERIES; s++) {
      b.addTimeseries(TimeSeries.newBuilder().addLabels(label("__name__", "ex_requests_total"))
          .addLabels(label("s", String.valueOf(s))).addExemplars(Exemplar.newBuilder()
              .addLabels(label("trace_id", s + "-" + k)).setValue(k + 0.25).setTimestamp(t)));
      acked.add(s + "|" + s + "-" + k + "|" + (k + 0.25) + "|" + t);
    }
    b.addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("ex_requests").setType(
        MetricMetadata.MetricType.COUNTER).setHelp("Requests served.").setUnit("requests"));
    return b.build();
  }

  /** Writes every push; returns the acknowledged exemplars in write order. */
  private static List<String> writeAll(WeirProcess w, long base) throws Exception {
    List<String> acked = new ArrayList<>();
    RemoteClient client = new RemoteClient(w.httpUrl());
    for (int k = 0; k < PUSHES; k++) {
      List<String> these = new ArrayList<>();
      RemoteClient.Response r = client.post("/api/v1/push", Snappy.compress(push(base, k, these).toByteArray()),
          "Content-Encoding", "snappy", "Content-Type", "application/x-protobuf",
          "X-Prometheus-Remote-Write-Version", "0.1.0");
      assertThat(r.status()).as(r.text()).isBetween(200, 299);
      acked.addAll(these);
    }
    return acked;
  }

  /** "series|trace_id|value|timestamp ms" of every exemplar {@code w} returns, sorted. */
  private static TreeSet<String> exemplars(WeirProcess w) throws Exception {
    String q = URLEncoder.encode("{__name__=\"ex_requests_total\"}", StandardCharsets.UTF_8);
    JsonNode data = JSON.readTree(w.get("/api/v1/query_exemplars?query=" + q)).get("data");
    TreeSet<String> out = new TreeSet<>();
    for (JsonNode series : data) {
      String s = series.get("seriesLabels").get("s").asText();
      for (JsonNode e : series.get("exemplars")) {
        long ms = Math.round(e.get("timestamp").asDouble() * 1000);
        out.add(s + "|" + e.get("labels").get("trace_id").asText() + "|" + Double.parseDouble(e.get("value").asText())
            + "|" + ms);
      }
    }
    return out;
  }

  private static void assertMetadata(WeirProcess w) throws Exception {
    JsonNode m = JSON.readTree(w.get("/api/v1/metadata")).get("data").get("ex_requests");
    assertThat(m).as("metadata of ex_requests").isNotNull();
    assertThat(m.get(0).get("type").asText()).isEqualTo("counter");
    assertThat(m.get(0).get("help").asText()).isEqualTo("Requests served.");
    assertThat(m.get(0).get("unit").asText()).isEqualTo("requests");
  }

  private static void assertAfterRestart(WeirProcess ingester, WeirProcess querier, List<String> acked)
      throws Exception {
    // The ring evicts the oldest: the newest LIMIT of the acknowledged exemplars remain.
    TreeSet<String> expected = new TreeSet<>(acked.subList(acked.size() - LIMIT, acked.size()));
    assertThat(exemplars(ingester)).isEqualTo(expected);
    assertMetadata(ingester);
    assertThat(exemplars(querier)).isEqualTo(expected);
    assertMetadata(querier);
  }

  @Test
  void classicModeKeepsTheNewestAckedExemplarsAndMetadataAcrossKillNine() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String[] ring = {"--ingester.ring.store=etcd", "--ingester.ring.etcd.endpoints=" + etcd.endpoint(),
        "--ingester.ring.prefix=exmeta-it-" + UUID.randomUUID() + "/", "--ingester.ring.heartbeat-period=1s",
        "--ingester.ring.instance-addr=127.0.0.1", "--auth.multitenancy-enabled=false"};
    // Both processes start at once (half the wall time of one after the other).
    try (WeirProcess ingester = WeirProcess.launch(dir.resolve("ingester"), with(ring,
            "--ingester.max-global-exemplars-per-user=" + LIMIT));
        WeirProcess querier = WeirProcess.launch(dir.resolve("querier"), with(ring, "--target=querier"))) {
      ingester.awaitReady(Duration.ofSeconds(60));
      querier.awaitReady(Duration.ofSeconds(60));
      List<String> acked = writeAll(ingester, System.currentTimeMillis() - 60_000);
      ingester.kill();
      ingester.restart();
      assertAfterRestart(ingester, querier, acked);
    }
  }

  @Test
  void kafkaModeCarriesExemplarsAndMetadataInV2RecordsAndKeepsThemAcrossKillNine() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    try (WeirProcess ingester = WeirProcess.launch(dir.resolve("all"), c.args("--ingester.id=ingester-zone-a-0",
            "--auth.multitenancy-enabled=false", "--ingest-storage.kafka.producer-record-version=2",
            "--ingester.max-global-exemplars-per-user=" + LIMIT));
        WeirProcess querier = WeirProcess.launch(dir.resolve("querier"), c.args("--target=querier",
            "--auth.multitenancy-enabled=false"))) {
      ingester.awaitReady(Duration.ofSeconds(60));
      querier.awaitReady(Duration.ofSeconds(60));
      KafkaCluster.awaitActivePartitions(querier, 1);
      long t0 = System.nanoTime();
      List<String> acked = writeAll(ingester, System.currentTimeMillis() - 60_000);
      // Consumed before the kill (what was not yet committed is consumed again after the restart).
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> exemplars(ingester).size() == LIMIT);
      System.out.printf("kafka case: written and consumed in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      long t1 = System.nanoTime();
      ingester.kill();
      ingester.restart();
      System.out.printf("kafka case: restarted in %d ms%n", (System.nanoTime() - t1) / 1_000_000);
      assertAfterRestart(ingester, querier, acked);
    }
  }

  private static String[] with(String[] base, String... more) {
    List<String> a = new ArrayList<>(List.of(base));
    a.addAll(List.of(more));
    return a.toArray(String[]::new);
  }
}
