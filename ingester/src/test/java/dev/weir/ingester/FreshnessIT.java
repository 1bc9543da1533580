package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * The freshness contract with real processes: a distributor, two ingesters (partitions 0 and 1)
 * and a querier on a real broker and etcd.
 *
 * <ul>
 *   <li>Read-your-writes: a write's {@code X-Weir-Produced-Offsets} (HTTP header, or gRPC
 *       response header of Push), sent back as {@code X-Read-Consistency-Offsets}, returns the
 *       written samples; bad values are 400s.
 *   <li>A lagging partition: the broker throttles partition 1's reader to 1 byte/s (a Kafka client
 *       quota on its client ID) while writes continue. {@code /api/v1/user_lag} shows it behind,
 *       and so does ingester 1's per-tenant gauge; the querier's answers carry a warning naming
 *       it, ingester 1 (run with
 *       {@code --querier.fail-on-high-partition-lag}) refuses its own queries with 503; once the
 *       quota is lifted (and the throttled ingester restarted) the lag returns to 0 and every
 *       acknowledged sample is read.
 * </ul>
 */
class FreshnessIT {
  static final int SERIES = 40;
  static final ObjectMapper JSON = new ObjectMapper();
  static final String METRIC = "fresh_metric";

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private final long t0 = System.currentTimeMillis() - 300_000;

  @Test
  void lagIsReportedPerTenantAndOnQueriesAndReadYourWritesWaitsForTheProducedOffset() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    String laggingClient = "lagging-" + c.topic;
    List<WeirProcess> all = new ArrayList<>();
    try (Admin admin = c.broker.admin()) {
      all.add(WeirProcess.launch(dir.resolve("ingester-0"), c.args("--target=ingester",
          "--ingester.id=ingester-zone-a-0", "--auth.multitenancy-enabled=false")));
      all.add(WeirProcess.launch(dir.resolve("ingester-1"), c.args("--target=ingester",
          "--ingester.id=ingester-zone-a-1", "--auth.multitenancy-enabled=false",
          "--ingest-storage.kafka.client-id=" + laggingClient, "--querier.max-partition-lag=2s",
          "--querier.fail-on-high-partition-lag=true", "--ingester.user-lag-metrics-enabled=true")));
      for (WeirProcess w : all) {
        w.awaitReady(Duration.ofSeconds(90));
      }
      WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor",
          "--auth.multitenancy-enabled=false"));
      all.add(distributor);
      WeirProcess querier = WeirProcess.start(dir.resolve("querier"), c.args("--target=querier",
          "--auth.multitenancy-enabled=false", "--querier.max-partition-lag=2s"));
      all.add(querier);
      for (WeirProcess w : List.of(distributor, querier)) {
        KafkaCluster.awaitActivePartitions(w, 2);
      }
      Map<String, Double> written = new TreeMap<>();

      // Read-your-writes through the querier, at exactly the offsets the write produced.
      HttpResponse<String> w = push(distributor, 0, written);
      String produced = w.headers().firstValue("X-Weir-Produced-Offsets").orElseThrow();
      Map<Integer, Long> offsets = offsets(produced);
      assertThat(offsets).as(produced).containsOnlyKeys(0, 1);
      HttpResponse<String> read = get(querier, "/api/v1/export?match[]=" + METRIC, "X-Read-Consistency-Offsets",
          produced);
      assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
      assertThat(exported(read.body())).isEqualTo(written);
      long consumedUpTo = (long) (Double.parseDouble(read.headers().firstValue("X-Weir-Consumed-Up-To")
          .orElseThrow()) * 1000);
      assertThat(consumedUpTo).as("consumed up to a moment ago").isBetween(System.currentTimeMillis() - 30_000,
          System.currentTimeMillis());

      // The same over gRPC: the distributor's Push answers with the offsets in its response headers.
      ManagedChannel ch = NettyChannelBuilder.forTarget(distributor.grpcTarget()).usePlaintext().build();
      try {
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        IngesterGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers,
            trailers)).push(WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
                .addLabels(Label.newBuilder().setName("__name__").setValue("fresh_grpc"))
                .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(7))).build());
        String grpcProduced = headers.get().get(Metadata.Key.of("x-weir-produced-offsets",
            Metadata.ASCII_STRING_MARSHALLER));
        assertThat(grpcProduced).matches("\\d+:\\d+");
        HttpResponse<String> grpcRead = get(querier, "/api/v1/export?match[]=fresh_grpc",
            "X-Read-Consistency-Offsets", grpcProduced);
        assertThat(exported(grpcRead.body())).containsExactly(Map.entry("@" + t0, 7.0));
      } finally {
        ch.shutdownNow();
      }

      HttpResponse<String> bad = get(querier, "/api/v1/series?match[]=" + METRIC, "X-Read-Consistency-Offsets",
          "1:abc");
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(JSON.readTree(bad.body()).get("error").asText()).contains("X-Read-Consistency-Offsets")
          .contains("1:abc");
      HttpResponse<String> notProduced = get(all.get(0), "/api/v1/series?match[]=" + METRIC,
          "X-Read-Consistency-Offsets", "0:" + (offsets.get(0) + 1_000_000));
      assertThat(notProduced.statusCode()).as(notProduced.body()).isEqualTo(400);
      assertThat(notProduced.body()).contains("was not produced");

      // Partition 1's reader is throttled by the broker while writes continue.
      quota(admin, laggingClient + "-reader-1", 1.0);
      for (int k = 1; k < 31; k++) {
        push(distributor, k, written);
      }
      await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> {
        JsonNode p1 = partition(userLag(querier), 1);
        assertThat(p1.get("records_behind").asLong()).as("%s", p1).isPositive();
        assertThat(p1.get("seconds_behind").asDouble()).as("%s", p1).isGreaterThan(2);
        assertThat(p1.get("ready").asBoolean()).isTrue();
        assertThat(p1.get("owner").asText()).isEqualTo("ingester-zone-a-1");
        assertThat(p1.get("newest_sample_time").isNumber()).isTrue();
        JsonNode p0 = partition(userLag(querier), 0);
        assertThat(p0.get("records_behind").asLong()).as("%s", p0).isZero();
      });
      await().atMost(30, TimeUnit.SECONDS).until(() -> all.get(1)
          .metric("weir_ingester_user_lag_seconds{partition=\"1\",user=\"anonymous\"}") > 2);
      JsonNode own = JSON.readTree(get(all.get(1), "/api/v1/user_lag").body()).get("data").get("partitions");
      assertThat(own).hasSize(1);
      assertThat(own.get(0).get("records_behind").asLong()).isPositive();

      HttpResponse<String> warned = get(querier, "/api/v1/series?match[]=" + METRIC);
      assertThat(warned.statusCode()).as(warned.body()).isEqualTo(200);
      JsonNode warnings = JSON.readTree(warned.body()).get("warnings");
      assertThat(warnings).as(warned.body()).hasSize(1);
      assertThat(warnings.get(0).asText()).contains("partition 1").contains("--querier.max-partition-lag=2s");
      long header = (long) (Double.parseDouble(warned.headers().firstValue("X-Weir-Consumed-Up-To").orElseThrow())
          * 1000);
      assertThat(header).as("the lagging partition's time").isLessThan(System.currentTimeMillis() - 2_000);

      HttpResponse<String> failed = get(all.get(1), "/api/v1/series?match[]=" + METRIC);
      assertThat(failed.statusCode()).as(failed.body()).isEqualTo(503);
      assertThat(failed.body()).contains("partition 1").contains("--querier.fail-on-high-partition-lag");

      // Lifted: the reader catches up, the warning goes, and every acknowledged sample is read. The
      // client still backs off for the throttle time the broker gave it (minutes at 1 byte/s), so
      // the ingester is restarted: it consumes the backlog from its last commit.
      quota(admin, laggingClient + "-reader-1", null);
      all.get(1).kill();
      all.get(1).restart();
      await().atMost(90, TimeUnit.SECONDS).untilAsserted(() -> {
        JsonNode p1 = partition(userLag(querier), 1);
        assertThat(p1.get("records_behind").asLong()).as("%s", p1).isZero();
        HttpResponse<String> r = get(querier, "/api/v1/series?match[]=" + METRIC);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).has("warnings")).as(r.body()).isFalse();
      });
      HttpResponse<String> all32 = get(querier, "/api/v1/export?match[]=" + METRIC, "X-Read-Consistency",
          "strong");
      assertThat(all32.statusCode()).isEqualTo(200);
      assertThat(exported(all32.body())).hasSize(written.size()).isEqualTo(written);
    } finally {
      for (int i = all.size() - 1; i >= 0; i--) {
        all.get(i).close();
      }
    }
  }

  /** Sets (or with null removes) a consumer byte-rate quota on a Kafka client ID. */
  private static void quota(Admin admin, String clientId, Double bytesPerSecond) throws Exception {
    ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, clientId));
    admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity,
        List.of(new ClientQuotaAlteration.Op("consumer_byte_rate", bytesPerSecond))))).all().get(30, TimeUnit.SECONDS);
  }

  /** Remote-writes SERIES series with one sample each at t0 + k s (value k); records what was acknowledged. */
  private HttpResponse<String> push(WeirProcess distributor, int k, Map<String, Double> written) throws Exception {
    WriteRequest.Builder req = WriteRequest.newBuilder();
    Map<String, Double> batch = new HashMap<>();
    for (int s = 0; s < SERIES; s++) {
      String series = String.format("%03d", s);
      long t = t0 + k * 1000L;
      req.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue(METRIC))
          .addLabels(Label.newBuilder().setName("series").setValue(series))
          .addSamples(Sample.newBuilder().setTimestamp(t).setValue(k)));
      batch.put(series + "@" + t, (double) k);
    }
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(distributor.httpUrl() + "/api/v1/push"))
        .header("Content-Encoding", "snappy").header("Content-Type", "application/x-protobuf")
        .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(req.build().toByteArray()))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    written.putAll(batch);
    return r;
  }

  private HttpResponse<String> get(WeirProcess w, String path, String... headers) throws Exception {
    int q = path.indexOf("match[]=");
    String url = q < 0 ? path : path.substring(0, q + 8) + URLEncoder.encode(path.substring(q + 8),
        StandardCharsets.UTF_8);
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(w.httpUrl() + url)).timeout(Duration.ofSeconds(60));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode userLag(WeirProcess w) throws Exception {
    HttpResponse<String> r = get(w, "/api/v1/user_lag");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode root = JSON.readTree(r.body());
    assertThat(root.get("status").asText()).isEqualTo("success");
    return root.get("data").get("partitions");
  }

  private static JsonNode partition(JsonNode partitions, int p) {
    for (JsonNode n : partitions) {
      if (n.get("partition").asInt() == p) {
        return n;
      }
    }
    throw new AssertionError("partition " + p + " not in " + partitions);
  }

  private static Map<Integer, Long> offsets(String header) {
    Map<Integer, Long> out = new TreeMap<>();
    for (String pair : header.split(",")) {
      String[] kv = pair.split(":");
      out.put(Integer.parseInt(kv[0]), Long.parseLong(kv[1]));
    }
    return out;
  }

  /** Export lines as series@timestamp → value. */
  private static Map<String, Double> exported(String body) throws Exception {
    Map<String, Double> out = new TreeMap<>();
    for (String line : body.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode n = JSON.readTree(line);
      JsonNode seriesLabel = n.get("metric").get("series");
      String series = seriesLabel == null ? "" : seriesLabel.asText();
      for (int i = 0; i < n.get("timestamps").size(); i++) {
        out.put(series + "@" + n.get("timestamps").get(i).asLong(), n.get("values").get(i).asDouble());
      }
    }
    return out;
  }
}
