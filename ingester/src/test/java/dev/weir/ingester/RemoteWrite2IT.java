package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.writev2.Exemplar;
import dev.weir.proto.writev2.Histogram;
import dev.weir.proto.writev2.Metadata;
import dev.weir.proto.writev2.Request;
import dev.weir.proto.writev2.Sample;
import dev.weir.storage.testing.Rw2Requests;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Remote write 2.0 against a real Weir process (classic mode): requests built from the official
 * .proto; what is stored is read back, the written-counts headers are exact also when part of a
 * request is refused, and each malformed series is refused by name and counted by reason while
 * the rest is stored.
 */
class RemoteWrite2IT {
  static final String V2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request";

  @TempDir static Path dir;
  static WeirProcess weir;
  static final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    weir = WeirProcess.start(dir.resolve("weir"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (weir != null) {
      weir.close();
    }
  }

  record Resp(int status, String text, long samples, long histograms, long exemplars) {}

  static Resp send(String baseUrl, String tenant, byte[] body, String contentType) throws Exception {
    HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/v1/push"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(body))).header("X-Scope-OrgID", tenant)
        .header("Content-Encoding", "snappy").header("Content-Type", contentType)
        .header("X-Prometheus-Remote-Write-Version", "2.0.0").build(), HttpResponse.BodyHandlers.ofByteArray());
    return new Resp(r.statusCode(), new String(r.body(), StandardCharsets.UTF_8),
        header(r, "X-Prometheus-Remote-Write-Samples-Written"),
        header(r, "X-Prometheus-Remote-Write-Histograms-Written"),
        header(r, "X-Prometheus-Remote-Write-Exemplars-Written"));
  }

  static long header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).map(Long::parseLong).orElse(-1L);
  }

  static Resp writeV2(String baseUrl, String tenant, Request req) throws Exception {
    return send(baseUrl, tenant, req.toByteArray(), V2);
  }

  @Test
  void aFullRequestStoresItsFloatsAndMetadataAndSaysExactlyWhatWasWritten() throws Exception {
    long base = System.currentTimeMillis() - 120_000;
    Resp r = writeV2(weir.httpUrl(), "full", Rw2Requests.fullRequest(base).build());
    // Every float sample, both native histograms and the valid exemplar are stored; the exemplar
    // without labels or timestamp is refused, named in the 400.
    assertThat(r.status()).as(r.text()).isEqualTo(400);
    // The only error is the exemplar without labels.
    assertThat(r.text()).contains("received an exemplar with no valid labels", "http_requests_total")
        .doesNotContain("more errors in this request");
    assertThat(r.samples()).isEqualTo(3);
    assertThat(r.histograms()).isEqualTo(2);
    assertThat(r.exemplars()).as("one valid exemplar; the one without labels or timestamp is refused").isEqualTo(1);
    Map<String, ExportClient.Series> stored = new ExportClient(weir.httpUrl()).export("full", "{job=\"api\"}");
    assertThat(stored.keySet()).containsExactlyInAnyOrder(
        "{__name__=\"http_requests_total\",code=\"200\",job=\"api\"}",
        "{__name__=\"temperature_celsius\",job=\"api\"}");
    ExportClient.Series counter = stored.get("{__name__=\"http_requests_total\",code=\"200\",job=\"api\"}");
    assertThat(counter.timestamps()).as("the created timestamp adds no sample").containsExactly(base + 1_000,
        base + 2_000);
    assertThat(counter.values()).containsExactly(1.0, 2.5);
    assertThat(new ExportClient(weir.httpUrl()).export("full", "{__name__=\"rpc_duration_seconds\"}")).isEmpty();
    JsonNode meta = new ObjectMapper().readTree(metadata("full"));
    assertThat(meta.get("data").get("http_requests_total").get(0).get("type").asText()).isEqualTo("counter");
    assertThat(meta.get("data").get("http_requests_total").get(0).get("help").asText()).isEqualTo("Requests served.");
    assertThat(meta.get("data").get("http_requests_total").get(0).get("unit").asText()).isEqualTo("requests");
    assertThat(meta.get("data").get("rpc_duration_seconds").get(0).get("type").asText()).isEqualTo("histogram");
  }

  static String metadata(String tenant) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(weir.httpUrl() + "/api/v1/metadata"))
        .header("X-Scope-OrgID", tenant).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  @Test
  void floatsOnlyGet204WithTheCountsAndAreReadBack() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    Rw2Requests req = new Rw2Requests();
    for (int s = 0; s < 50; s++) {
      req.floats(new String[] {"__name__", "rw2_floats", "id", "s" + s, "job", "x"}, t0, s, t0 + 15_000, s + 1);
    }
    Resp r = writeV2(weir.httpUrl(), "floats", req.build());
    assertThat(r.status()).as(r.text()).isEqualTo(204);
    assertThat(r.samples()).isEqualTo(100);
    // The same series again (now known: found without building labels) with new samples.
    Rw2Requests again = new Rw2Requests();
    for (int s = 49; s >= 0; s--) {
      again.floats(new String[] {"__name__", "rw2_floats", "id", "s" + s, "job", "x"}, t0 + 30_000, -s);
    }
    assertThat(writeV2(weir.httpUrl(), "floats", again.build()).samples()).isEqualTo(50);
    Map<String, ExportClient.Series> stored = new ExportClient(weir.httpUrl()).export("floats", "{job=\"x\"}");
    assertThat(stored).hasSize(50);
    assertThat(stored.values().stream().mapToInt(s -> s.timestamps().size()).sum()).isEqualTo(150);
    assertThat(stored.get("{__name__=\"rw2_floats\",id=\"s7\",job=\"x\"}").values()).containsExactly(7.0, 8.0, -7.0);
  }

  @Test
  void eachMalformedSeriesIsRefusedByNameAndCountedAndTheRestIsStored() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    Histogram good = Rw2Requests.intHistogram(t0);
    Rw2Requests r = new Rw2Requests();
    r.floats(new String[] {"__name__", "kept", "id", "1"}, t0, 1);
    r.add(r.series("__name__", "bad_ref").addLabelsRefs(r.ref("id")).addLabelsRefs(4_000)
        .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1)));
    r.add(r.series("__name__", "odd_refs", "id").addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1)));
    r.add(r.series("job", "no_name").addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1))
        .addSamples(Sample.newBuilder().setTimestamp(t0 + 1).setValue(1)));
    r.add(r.series("__name__", "bad_spans").addHistograms(good.toBuilder().addPositiveDeltas(1)));
    r.add(r.series("__name__", "negative").addHistograms(good.toBuilder().clearNegativeDeltas().addNegativeDeltas(-3)));
    r.add(r.series("__name__", "bad_exemplar").addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1))
        .addExemplars(Exemplar.newBuilder().addLabelsRefs(0).addLabelsRefs(9_999)));
    r.add(r.series("__name__", "bad_help").addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1))
        .setMetadata(Metadata.newBuilder().setHelpRef(8_888)));
    r.floats(new String[] {"__name__", "kept", "id", "2"}, t0, 2, t0 + 1, 3);
    Resp resp = writeV2(weir.httpUrl(), "bad", r.build());
    assertThat(resp.status()).isEqualTo(400);
    assertThat(resp.text()).contains("symbol reference 4000 is out of range", "__name__=\"bad_ref\"")
        .contains("and 6 more errors");
    assertThat(resp.samples()).as("only the two kept series").isEqualTo(3);
    assertThat(new ExportClient(weir.httpUrl()).export("bad", "{__name__=~\".+\"}").keySet())
        .containsExactlyInAnyOrder("{__name__=\"kept\",id=\"1\"}", "{__name__=\"kept\",id=\"2\"}");
    for (var e : Map.of("invalid_symbol_reference", 3, "invalid_labels_refs", 1, "missing_metric_name", 2,
        "native_histogram_span_bucket_mismatch", 1, "native_histogram_negative_count", 1).entrySet()) {
      assertThat(weir.metric("weir_discarded_samples_total{reason=\"" + e.getKey() + "\",user=\"bad\"}"))
          .as(e.getKey()).isEqualTo(e.getValue().doubleValue());
    }
    // Each alone, so each message is seen.
    Map<String, Rw2Requests> alone = Map.of(
        "odd length (3)", single(x -> x.series("__name__", "odd_refs", "id")),
        "without a metric name", single(x -> x.series("job", "no_name")),
        "spans describe 3 buckets but 4", single(x -> x.series("__name__", "bad_spans")
            .addHistograms(good.toBuilder().addPositiveDeltas(1))),
        "negative negative bucket count", single(x -> x.series("__name__", "negative")
            .addHistograms(good.toBuilder().clearNegativeDeltas().addNegativeDeltas(-3))),
        "symbol reference 9999", single(x -> x.series("__name__", "bad_exemplar")
            .addExemplars(Exemplar.newBuilder().addLabelsRefs(0).addLabelsRefs(9_999))));
    for (var e : alone.entrySet()) {
      Resp one = writeV2(weir.httpUrl(), "bad", e.getValue().build());
      assertThat(one.status()).as(e.getKey()).isEqualTo(400);
      assertThat(one.text()).as(one.text()).containsIgnoringCase(e.getKey());
      assertThat(one.samples()).isZero();
    }
  }

  static Rw2Requests single(java.util.function.Function<Rw2Requests, dev.weir.proto.writev2.TimeSeries.Builder> s) {
    Rw2Requests r = new Rw2Requests();
    r.add(s.apply(r).addSamples(Sample.newBuilder().setTimestamp(System.currentTimeMillis()).setValue(1)));
    return r;
  }

  @Test
  void unknownProtoGets415AndTheOnePointZeroNameStillWorks() throws Exception {
    Resp r = send(weir.httpUrl(), "proto", new byte[] {0x0a, 0}, "application/x-protobuf;proto=io.prometheus.write.v3.Request");
    assertThat(r.status()).isEqualTo(415);
    assertThat(r.text()).contains("io.prometheus.write.v3.Request", "io.prometheus.write.v2.Request");
    dev.weir.proto.prompb.WriteRequest v1 = dev.weir.proto.prompb.WriteRequest.newBuilder()
        .addTimeseries(dev.weir.proto.prompb.TimeSeries.newBuilder()
            .addLabels(dev.weir.proto.prompb.Label.newBuilder().setName("__name__").setValue("v1"))
            .addSamples(dev.weir.proto.prompb.Sample.newBuilder().setTimestamp(System.currentTimeMillis())
                .setValue(1))).build();
    assertThat(send(weir.httpUrl(), "proto", v1.toByteArray(), "application/x-protobuf;proto=prometheus.WriteRequest")
        .status()).isEqualTo(200);
    assertThat(new ExportClient(weir.httpUrl()).export("proto", "{__name__=\"v1\"}")).hasSize(1);
    Resp broken = send(weir.httpUrl(), "proto", new byte[] {0x2a, 0x7f, 1}, V2);
    assertThat(broken.status()).isEqualTo(400);
    assertThat(broken.text()).contains("not a remote write 2.0 request");
  }
}
