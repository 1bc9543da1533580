package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The querier in Kafka mode with real processes: a distributor writes into a 2-partition topic
 * consumed by ingester-zone-a-0 and -1, and a querier finds one owner per partition in the etcd
 * partition ring. A strong read through the querier right after the writes returns every series
 * and the export equals what was written; once the owner of partition 1 is killed, the querier
 * refuses (503 naming partition 1) instead of answering with partition 0 alone.
 */
class QuerierKafkaIT {
  static final int SERIES = 200;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void readsOneOwnerPerPartitionAndRefusesWhenAPartitionHasNone() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    List<WeirProcess> all = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        all.add(WeirProcess.launch(dir.resolve("ingester-" + i), c.args("--target=ingester",
            "--ingester.id=ingester-zone-a-" + i, "--auth.multitenancy-enabled=false")));
      }
      for (WeirProcess w : all) {
        w.awaitReady(Duration.ofSeconds(90));
      }
      WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor",
          "--auth.multitenancy-enabled=false"));
      all.add(distributor);
      WeirProcess querier = WeirProcess.start(dir.resolve("querier"), c.args("--target=querier",
          "--auth.multitenancy-enabled=false", "--ingester.ring.heartbeat-timeout=3s"));
      all.add(querier);
      for (WeirProcess w : List.of(distributor, querier)) {
        KafkaCluster.awaitActivePartitions(w, 2);
      }

      Map<String, List<Double>> written = write(distributor);
      HttpResponse<String> series = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create(querier.httpUrl() + "/api/v1/series?match[]=kq_metric"))
          .header("X-Read-Consistency", "strong").build(), HttpResponse.BodyHandlers.ofString());
      assertThat(series.statusCode()).as(series.body()).isEqualTo(200);
      assertThat(JSON.readTree(series.body()).get("data")).hasSize(SERIES);

      Map<String, List<Double>> exported = new TreeMap<>();
      new ExportClient(querier.httpUrl()).export(null, "kq_metric").forEach((k, s) -> exported.put(k, s.values()));
      assertThat(exported).isEqualTo(written);
      // Metadata travels with one record of each request: the querier gathers it from every owner.
      JsonNode metadata = JSON.readTree(querier.get("/api/v1/metadata")).get("data");
      assertThat(metadata.get("kq_metric").get(0).get("help").asText()).isEqualTo("A test gauge.");
      assertThat(metadata.get("kq_other").get(0).get("type").asText()).isEqualTo("counter");
      int known = JSON.readTree(all.get(0).get("/api/v1/metadata")).get("data").size()
          + JSON.readTree(all.get(1).get("/api/v1/metadata")).get("data").size();
      assertThat(known).as("the owners together know both families").isGreaterThanOrEqualTo(2);
      // The querier's partition ring page knows every partition's lag (from Kafka): consumed, so 0.
      await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> {
        for (int p = 0; p < 2; p++) {
          assertThat(PartitionDownscaleIT.partitionOnPage(querier, p).get("lag_records").asLong()).isZero();
        }
      });
      int perIngester0 = new ExportClient(all.get(0).httpUrl()).export(null, "kq_metric").size();
      int perIngester1 = new ExportClient(all.get(1).httpUrl()).export(null, "kq_metric").size();
      assertThat(perIngester0).as("both partitions hold series").isPositive().isLessThan(SERIES);
      assertThat(perIngester0 + perIngester1).isEqualTo(SERIES);

      all.get(1).kill();
      // Until its heartbeat is older than the querier's timeout the dead owner is still picked and the
      // call fails; after that no owner qualifies. Either way: 503 naming partition 1, never a 200.
      await().atMost(30, TimeUnit.SECONDS).until(() -> {
        HttpResponse<String> r = querier.getResponse("/api/v1/series?match[]=kq_metric");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        String error = JSON.readTree(r.body()).get("error").asText();
        assertThat(error).contains("partition 1");
        return error.contains("no healthy owner for partition 1");
      });
      JsonNode err = JSON.readTree(querier.getResponse("/api/v1/series?match[]=kq_metric").body());
      assertThat(err.get("error").asText()).contains("ingester-zone-a-1: last heartbeat");
    } finally {
      for (int i = all.size() - 1; i >= 0; i--) {
        all.get(i).close();
      }
    }
  }

  /** Writes SERIES series of 3 samples through the distributor; returns the samples by series text. */
  static Map<String, List<Double>> write(WeirProcess distributor) throws Exception {
    long t0 = System.currentTimeMillis() - 120_000;
    WriteRequest.Builder req = WriteRequest.newBuilder();
    Map<String, List<Double>> written = new TreeMap<>();
    for (int s = 0; s < SERIES; s++) {
      TimeSeries.Builder ts = TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("kq_metric"))
          .addLabels(Label.newBuilder().setName("series").setValue(String.format("%04d", s)));
      List<Double> values = new ArrayList<>();
      for (int k = 0; k < 3; k++) {
        double v = s * 10.0 + k;
        ts.addSamples(Sample.newBuilder().setTimestamp(t0 + k * 15_000L).setValue(v));
        values.add(v);
      }
      req.addTimeseries(ts);
      written.put("{__name__=\"kq_metric\",series=\"" + String.format("%04d", s) + "\"}", values);
    }
    req.addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("kq_metric")
        .setType(MetricMetadata.MetricType.GAUGE).setHelp("A test gauge."));
    new RemoteClient(distributor.httpUrl()).write(req.build());
    new RemoteClient(distributor.httpUrl()).write(WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("kq_other"))
        .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1))).addMetadata(MetricMetadata.newBuilder()
        .setMetricFamilyName("kq_other").setType(MetricMetadata.MetricType.COUNTER).setHelp("Other.")).build());
    return written;
  }
}
