package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka mode end to end with real processes: 3 tenants × 100k series through a distributor into a
 * 4-partition topic, consumed by ingesters ingester-zone-a-0..3; the union of what the ingesters
 * export equals what was written, and every series lives on exactly one ingester.
 */
class KafkaModeIT {
  static final int TENANTS = 3;
  static final int SERIES = 100_000;
  static final int SAMPLES = 2;
  static final int BATCH = 2_000;

  @TempDir Path dir;

  @Test
  void threeTenantsOfHundredThousandSeriesReachFourIngestersExactly() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 4);
    List<WeirProcess> ingesters = new ArrayList<>();
    long t0 = System.currentTimeMillis() - 600_000;
    try {
      for (int i = 0; i < 4; i++) {
        ingesters.add(WeirProcess.launch(dir.resolve("ingester-" + i), c.args("--target=ingester",
            "--ingester.id=ingester-zone-a-" + i)));
      }
      for (WeirProcess w : ingesters) {
        w.awaitReady(java.time.Duration.ofSeconds(90));
      }
      try (WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor"))) {
        await().atMost(30, TimeUnit.SECONDS).until(() -> distributor.get("/ingester/partition-ring")
            .split("<td>ACTIVE</td>", -1).length - 1 == 4);
        ManagedChannel ch = NettyChannelBuilder.forTarget(distributor.grpcTarget()).usePlaintext()
            .maxInboundMessageSize(64 << 20).build();
        try {
          for (int t = 0; t < TENANTS; t++) {
            Metadata md = new Metadata();
            md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), "tenant-" + t);
            IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
            for (int k = 0; k < SAMPLES; k++) {
              for (int from = 0; from < SERIES; from += BATCH) {
                WriteRequest.Builder b = WriteRequest.newBuilder();
                for (int s = from; s < from + BATCH; s++) {
                  b.addTimeseries(TimeSeries.newBuilder()
                      .addLabels(Label.newBuilder().setName("__name__").setValue("kafka_mode_" + (s % 10)))
                      .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
                      .addLabels(Label.newBuilder().setName("tenant_label").setValue("t" + t))
                      .addSamples(Sample.newBuilder().setTimestamp(t0 + k * 15_000L).setValue(s * 10.0 + k + t)));
                }
                stub.withDeadlineAfter(60, TimeUnit.SECONDS).push(b.build());
              }
            }
          }
        } finally {
          ch.shutdownNow();
        }
      }
      HttpClient http = HttpClient.newHttpClient();
      for (int t = 0; t < TENANTS; t++) {
        Map<String, Integer> owner = new HashMap<>();
        int total = 0;
        for (int i = 0; i < ingesters.size(); i++) {
          String url = ingesters.get(i).httpUrl() + "/api/v1/export?match[]=%7B__name__%3D~%22kafka_mode_.%2A%22%7D";
          HttpResponse<java.io.InputStream> r = http.send(HttpRequest.newBuilder(URI.create(url))
              .header("X-Scope-OrgID", "tenant-" + t).header("X-Read-Consistency", "strong").build(),
              HttpResponse.BodyHandlers.ofInputStream());
          assertThat(r.statusCode()).isEqualTo(200);
          int mine = 0;
          try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(r.body()))) {
            String line;
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            while ((line = in.readLine()) != null) {
              com.fasterxml.jackson.databind.JsonNode n = json.readTree(line);
              int s = n.get("metric").get("series").asInt();
              assertThat(n.get("metric").get("tenant_label").asText()).isEqualTo("t" + t);
              assertThat(owner.put("s" + s, i)).as("series %d of tenant %d on two ingesters", s, t).isNull();
              assertThat(n.get("timestamps")).hasSize(SAMPLES);
              for (int k = 0; k < SAMPLES; k++) {
                assertThat(n.get("timestamps").get(k).asLong()).isEqualTo(t0 + k * 15_000L);
                assertThat(n.get("values").get(k).asDouble()).isEqualTo(s * 10.0 + k + t);
              }
              mine++;
            }
          }
          assertThat(mine).as("ingester %d holds a share of tenant %d", i, t).isBetween(SERIES / 4 * 8 / 10,
              SERIES / 4 * 12 / 10);
          total += mine;
        }
        assertThat(total).as("tenant %d: every series exactly once across the ingesters", t).isEqualTo(SERIES);
      }
      for (WeirProcess w : ingesters) {
        assertThat(w.metric("weir_ingest_storage_reader_records_processed_total{outcome=\"client_error\",partition=\""
            + (ingesters.indexOf(w)) + "\"}")).isZero();
      }
    } finally {
      for (WeirProcess w : ingesters) {
        w.close();
      }
    }
  }
}
