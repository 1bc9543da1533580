package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The querier as a real process over real processes: a classic-mode ingester registered in an
 * etcd ring holds the last 25 minutes; a second Weir process, reached only through
 * {@code --querier.store-gateway-addresses} (it serves the same gRPC service a store-gateway does),
 * holds 50 to 20 minutes ago and one series of its own. The overlap holds identical samples. The
 * querier's windows (store-gateways for data older than 20 minutes, ingesters for the last 30)
 * make both sources answer part of a long query. Remote read (both types), the series, label and
 * export endpoints through the querier return exactly the union of what was written, Prometheus
 * 2.42 reading the querier answers PromQL exactly as Prometheus reading both sources, and limits
 * and a dead source fail the query with the reason.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class QuerierIT {
  static final long STEP = 15_000;
  static final long MIN = 60_000;
  static final int MAX_SERIES = 5;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;
  static final List<AutoCloseable> running = new ArrayList<>();
  static WeirProcess ingester;
  static WeirProcess storeGateway;
  static WeirProcess querier;
  static long now0;
  /** Every sample written to either source, by series text: the union the querier must return. */
  static final Map<String, TreeMap<Long, Double>> written = new TreeMap<>();

  @BeforeAll
  static void start() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String[] ring = {"--ingester.ring.store=etcd", "--ingester.ring.etcd.endpoints=" + etcd.endpoint(),
        "--ingester.ring.prefix=querier-it-" + UUID.randomUUID() + "/", "--ingester.ring.heartbeat-period=1s",
        "--ingester.ring.instance-addr=127.0.0.1"};
    ingester = WeirProcess.start(dir.resolve("ingester"), with(ring, "--auth.multitenancy-enabled=false"));
    running.add(ingester);
    storeGateway = WeirProcess.start(dir.resolve("store-gateway"), "--auth.multitenancy-enabled=false");
    running.add(storeGateway);
    querier = WeirProcess.start(dir.resolve("querier"), with(ring, "--target=querier",
        "--auth.multitenancy-enabled=false", "--querier.store-gateway-addresses=" + storeGateway.grpcTarget(),
        "--querier.query-store-after=20m", "--querier.query-ingesters-within=30m",
        "--querier.max-fetched-series-per-query=" + MAX_SERIES));
    running.add(querier);

    now0 = System.currentTimeMillis() / MIN * MIN;
    WriteRequest.Builder recent = WriteRequest.newBuilder();
    WriteRequest.Builder old = WriteRequest.newBuilder();
    for (String name : List.of("qit_up", "qit_requests_total")) {
      recent.addTimeseries(series(name, "a", now0 - 25 * MIN, now0));
      old.addTimeseries(series(name, "a", now0 - 50 * MIN, now0 - 20 * MIN));
    }
    old.addTimeseries(series("qit_only_store", "b", now0 - 50 * MIN, now0 - 30 * MIN));
    recent.addTimeseries(series("qit_only_ingester", "c", now0 - 10 * MIN, now0));
    for (int i = 0; i <= MAX_SERIES; i++) {
      recent.addTimeseries(series("qit_many", "m" + i, now0 - MIN, now0 - MIN));
    }
    new RemoteClient(ingester.httpUrl()).write(recent.build());
    new RemoteClient(storeGateway.httpUrl()).write(old.build());
    // The querier finds the ingester in the ring once it is ACTIVE there.
    await().atMost(30, TimeUnit.SECONDS).until(() -> querier.get("/ingester/ring").contains("<td>ACTIVE</td>"));
  }

  @AfterAll
  static void stop() throws Exception {
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  static String[] with(String[] base, String... extra) {
    List<String> out = new ArrayList<>(List.of(base));
    out.addAll(List.of(extra));
    return out.toArray(String[]::new);
  }

  /** A series sampled every 15 s in [from, to]; the value depends on name, instance and time only. */
  static TimeSeries series(String name, String instance, long from, long to) {
    TimeSeries.Builder b = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("instance").setValue(instance))
        .addLabels(Label.newBuilder().setName("job").setValue("qit"));
    String key = RemoteClient.key(b.getLabelsList());
    for (long t = from; t <= to; t += STEP) {
      double v = name.endsWith("_total") ? (t / 1000 % 100_000) * 2.0 : (t / STEP) % 7 + 0.25;
      b.addSamples(Sample.newBuilder().setTimestamp(t).setValue(v));
      written.computeIfAbsent(key, k -> new TreeMap<>()).put(t, v);
    }
    return b.build();
  }

  /** The written samples of the series whose text contains {@code part}, as {@link RemoteClient} prints them. */
  static Map<String, List<String>> expected(String part, long mint, long maxt) {
    Map<String, List<String>> out = new TreeMap<>();
    written.forEach((key, samples) -> {
      if (key.contains(part)) {
        List<String> list = new ArrayList<>();
        samples.subMap(mint, true, maxt, true).forEach((t, v) -> list.add(RemoteClient.sample(t, v)));
        if (!list.isEmpty()) {
          out.put(key, list);
        }
      }
    });
    return out;
  }

  static ReadRequest read(long mint, long maxt, LabelMatcher... matchers) {
    return ReadRequest.newBuilder().addQueries(Query.newBuilder().setStartTimestampMs(mint).setEndTimestampMs(maxt)
        .addAllMatchers(List.of(matchers))).build();
  }

  static LabelMatcher matcher(LabelMatcher.Type type, String name, String value) {
    return LabelMatcher.newBuilder().setType(type).setName(name).setValue(value).build();
  }

  static HttpResponse<String> get(WeirProcess p, String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(p.httpUrl() + path)).timeout(Duration.ofSeconds(30));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  @Test
  @Order(1)
  void remoteReadThroughTheQuerierReturnsExactlyTheUnionInBothResponseTypes() throws Exception {
    RemoteClient q = new RemoteClient(querier.httpUrl());
    LabelMatcher job = matcher(LabelMatcher.Type.EQ, "job", "qit");
    LabelMatcher notMany = matcher(LabelMatcher.Type.NRE, "__name__", "qit_many");
    long mint = now0 - 60 * MIN;
    Map<String, List<String>> all = expected("qit_", mint, now0);
    all.keySet().removeIf(k -> k.contains("qit_many"));
    assertThat(all).hasSize(4);
    assertThat(q.readSamples(read(mint, now0, job, notMany))).isEqualTo(all);
    assertThat(q.readStreamed(read(mint, now0, job, notMany), mint, now0)).isEqualTo(all);
    // Neither source alone has it all: the union is the querier's doing.
    assertThat(new RemoteClient(ingester.httpUrl()).readSamples(read(mint, now0, job, notMany))).isNotEqualTo(all);
    assertThat(new RemoteClient(storeGateway.httpUrl()).readSamples(read(mint, now0, job, notMany))).isNotEqualTo(all);
    // A range inside the overlap of the windows and of the data.
    long from = now0 - 24 * MIN - 7_000;
    long to = now0 - 21 * MIN;
    LabelMatcher up = matcher(LabelMatcher.Type.EQ, "__name__", "qit_up");
    assertThat(q.readSamples(read(from, to, up))).isEqualTo(expected("qit_up", from, to)).hasSize(1);
    assertThat(q.readStreamed(read(from, to, up), from, to)).isEqualTo(expected("qit_up", from, to));
  }

  @Test
  @Order(1)
  void seriesLabelsAndExportThroughTheQuerierAreTheUnion() throws Exception {
    String range = "&start=" + (now0 - 60 * MIN) / 1000 + "&end=" + now0 / 1000;
    HttpResponse<String> series = get(querier, "/api/v1/series?match[]=" + enc("{job=\"qit\",__name__!=\"qit_many\"}")
        + range, "X-Read-Consistency", "strong");
    assertThat(series.statusCode()).as(series.body()).isEqualTo(200);
    TreeSet<String> found = new TreeSet<>();
    for (JsonNode s : JSON.readTree(series.body()).get("data")) {
      found.add("{__name__=\"" + s.get("__name__").asText() + "\",instance=\"" + s.get("instance").asText()
          + "\",job=\"" + s.get("job").asText() + "\"}");
    }
    TreeSet<String> want = new TreeSet<>(written.keySet());
    want.removeIf(k -> k.contains("qit_many"));
    assertThat(found).isEqualTo(want);

    JsonNode values = JSON.readTree(get(querier, "/api/v1/label/instance/values?match[]=" + enc("{job=\"qit\"}")
        + range).body());
    assertThat(values.get("data").toString())
        .isEqualTo("[\"a\",\"b\",\"c\",\"m0\",\"m1\",\"m2\",\"m3\",\"m4\",\"m5\"]");
    JsonNode names = JSON.readTree(get(querier, "/api/v1/labels" + "?start=" + (now0 - 60 * MIN) / 1000).body());
    assertThat(names.get("data").toString()).isEqualTo("[\"__name__\",\"instance\",\"job\"]");

    String export = get(querier, "/api/v1/export?match[]=" + enc("qit_only_store") + range).body();
    assertThat(export.split("\n")).hasSize(1);
    assertThat(JSON.readTree(export).get("timestamps")).hasSize(expected("qit_only_store", 0, now0).values()
        .iterator().next().size());
  }

  @Test
  @Order(1)
  void prometheusReadingTheQuerierAnswersPromqlLikePrometheusReadingBothSources() throws Exception {
    String viaQuerier = "global:\n  scrape_interval: 1m\nremote_read:\n  - url: " + querier.httpUrl()
        + "/api/v1/read\n    read_recent: true\n";
    String viaSources = "global:\n  scrape_interval: 1m\nremote_read:\n"
        + "  - url: " + ingester.httpUrl() + "/api/v1/read\n    read_recent: true\n"
        + "  - url: " + storeGateway.httpUrl() + "/api/v1/read\n    read_recent: true\n";
    List<String> queries = List.of("qit_up", "rate(qit_requests_total[2m])", "sum by (instance) (qit_up)",
        "count_over_time({job=\"qit\",__name__=~\"qit_up|qit_only_.+\"}[5m])", "max_over_time(qit_only_store[10m])",
        "qit_only_ingester * 2");
    try (PrometheusProcess a = PrometheusProcess.start(dir.resolve("prom-querier"), PrometheusProcess.reservePort(),
            viaQuerier);
        PrometheusProcess b = PrometheusProcess.start(dir.resolve("prom-sources"), PrometheusProcess.reservePort(),
            viaSources)) {
      for (String q : queries) {
        JsonNode mine = a.queryRange(q, now0 - 50 * MIN, now0, Duration.ofSeconds(30)).get("data");
        JsonNode theirs = b.queryRange(q, now0 - 50 * MIN, now0, Duration.ofSeconds(30)).get("data");
        assertThat(theirs.get("result").size()).as("%s has data over the sources", q).isPositive();
        assertThat(mine).as(q).isEqualTo(theirs);
      }
    }
  }

  @Test
  @Order(1)
  void queryLimitsAnswer422WithTheReason() throws Exception {
    HttpResponse<String> series = get(querier, "/api/v1/series?match[]=qit_many");
    assertThat(series.statusCode()).isEqualTo(422);
    JsonNode err = JSON.readTree(series.body());
    assertThat(err.get("status").asText()).isEqualTo("error");
    assertThat(err.get("error").asText()).contains("more than " + MAX_SERIES + " series")
        .contains("--querier.max-fetched-series-per-query");
    RemoteClient.Response read = new RemoteClient(querier.httpUrl()).read(read(0, Long.MAX_VALUE,
        matcher(LabelMatcher.Type.EQ, "__name__", "qit_many")));
    assertThat(read.status()).isEqualTo(422);
    assertThat(read.text()).contains("more than " + MAX_SERIES + " series");
  }

  @Test
  @Order(2)
  void aDeadSourceFailsTheQueryWith503NamingItAndNoPartialAnswer() throws Exception {
    assertThat(querier.metricLines("weir_querier_source_request_duration_seconds_count"))
        .contains("kind=\"store-gateway\"").contains("kind=\"ingester\"");
    storeGateway.kill();
    HttpResponse<String> series = get(querier, "/api/v1/series?match[]=qit_up&start=" + (now0 - 60 * MIN) / 1000);
    assertThat(series.statusCode()).isEqualTo(503);
    JsonNode err = JSON.readTree(series.body());
    assertThat(err.get("errorType").asText()).isEqualTo("unavailable");
    assertThat(err.get("error").asText()).contains("store-gateway " + storeGateway.grpcTarget());
    RemoteClient.Response read = new RemoteClient(querier.httpUrl()).read(read(now0 - 60 * MIN, now0,
        matcher(LabelMatcher.Type.EQ, "__name__", "qit_up")));
    assertThat(read.status()).isEqualTo(503);
    assertThat(read.text()).contains("store-gateway " + storeGateway.grpcTarget());
    // A recent range needs no store-gateway and is still answered.
    assertThat(get(querier, "/api/v1/series?match[]=qit_up&start=" + (now0 - 5 * MIN) / 1000).statusCode())
        .isEqualTo(200);
  }
}
