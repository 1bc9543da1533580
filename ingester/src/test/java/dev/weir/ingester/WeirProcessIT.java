package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real binary as a child process: flags, the HTTP API, metrics, readiness and SIGTERM. */
class WeirProcessIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(WeirProcess w, String pathAndQuery, String tenant) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(w.httpUrl() + pathAndQuery));
    if (tenant != null) {
      b.header("X-Scope-OrgID", tenant);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  @Test
  void badFlagsExitOneWithOneClearLine() throws Exception {
    for (String[] args : List.of(new String[] {"--server.http-listen-port=abc"}, new String[] {"--no-such-flag"},
        new String[] {"--target=nonsense"}, new String[] {"--config.file=/nonexistent.yaml"})) {
      Process p = WeirProcess.runToExit(dir, args);
      String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as("exit code for %s", List.of(args)).isEqualTo(1);
      assertThat(err.strip().lines()).as("stderr for %s", List.of(args)).hasSize(1);
      assertThat(err).startsWith("weir: error: ");
    }
  }

  @Test
  void helpListsEveryFlagAndVersionPrints() throws Exception {
    Process help = WeirProcess.runToExit(dir, "--help");
    String text = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(help.exitValue()).isZero();
    assertThat(text).contains("--server.http-listen-port int", "(default 8080)",
        "--server.grpc-listen-port int", "(default 9095)", "--ingester.data-dir", "--auth.multitenancy-enabled",
        "--config.file", "--target");
    Process version = WeirProcess.runToExit(dir, "--version");
    assertThat(new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
        .startsWith("weir, version ");
  }

  @Test
  void configFileSetsTheSameKeysAsFlags() throws Exception {
    Path cfg = dir.resolve("weir.yaml");
    Files.writeString(cfg, "auth:\n  multitenancy_enabled: false\nlog:\n  format: json\n");
    try (WeirProcess w = WeirProcess.start(dir, "--config.file=" + cfg)) {
      // With multitenancy off, a request without the header works (tenant "anonymous").
      assertThat(get(w, "/api/v1/labels", null).statusCode()).isEqualTo(200);
      assertThat(get(w, "/config", null).body()).contains("auth.multitenancy-enabled: false  # config file");
      assertThat(w.log()).contains("{\"ts\":\"");
    }
  }

  @Test
  void servesWritesOverGrpcAndReadsOverHttpThenStopsCleanlyOnSigterm() throws Exception {
    try (WeirProcess w = WeirProcess.start(dir)) {
      assertThat(get(w, "/ready", null).statusCode()).isEqualTo(200);
      assertThat(get(w, "/health", null).body()).isEqualTo("ok\n");
      long now = System.currentTimeMillis();
      ManagedChannel ch = NettyChannelBuilder.forTarget(w.grpcTarget()).usePlaintext().build();
      try {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), "team-1");
        IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        WriteRequest.Builder req = WriteRequest.newBuilder();
        for (int s = 0; s < 3; s++) {
          req.addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("http_requests_total"))
              .addLabels(Label.newBuilder().setName("code").setValue(String.valueOf(200 + s)))
              .addSamples(Sample.newBuilder().setTimestamp(now - 1000).setValue(s))
              .addSamples(Sample.newBuilder().setTimestamp(now).setValue(s + 0.5)));
        }
        stub.push(req.build());
        try {
          stub.push(WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("bad-name"))
              .addSamples(Sample.newBuilder().setTimestamp(now))).build());
        } catch (StatusRuntimeException expected) {
          // counted below
        }
      } finally {
        ch.shutdownNow();
      }

      HttpResponse<String> series = get(w, "/api/v1/series?match[]=" + enc("http_requests_total{code=~\"20[01]\"}"), "team-1");
      assertThat(series.statusCode()).isEqualTo(200);
      assertThat(series.body()).isEqualTo("{\"status\":\"success\",\"data\":["
          + "{\"__name__\":\"http_requests_total\",\"code\":\"200\"},"
          + "{\"__name__\":\"http_requests_total\",\"code\":\"201\"}]}");
      assertThat(get(w, "/api/v1/labels", "team-1").body())
          .isEqualTo("{\"status\":\"success\",\"data\":[\"__name__\",\"code\"]}");
      assertThat(get(w, "/api/v1/label/code/values", "team-1").body())
          .isEqualTo("{\"status\":\"success\",\"data\":[\"200\",\"201\",\"202\"]}");
      assertThat(get(w, "/api/v1/label/code/values", "team-2").body())
          .isEqualTo("{\"status\":\"success\",\"data\":[]}");
      HttpResponse<String> export = get(w, "/api/v1/export?match[]=" + enc("{code=\"202\"}"), "team-1");
      assertThat(export.headers().firstValue("content-type")).hasValueSatisfying(v -> v.startsWith("application/stream+json"));
      assertThat(export.body()).isEqualTo("{\"metric\":{\"__name__\":\"http_requests_total\",\"code\":\"202\"},"
          + "\"values\":[2,2.5],\"timestamps\":[" + (now - 1000) + "," + now + "]}\n");
      assertThat(get(w, "/api/v1/series", "team-1").statusCode()).isEqualTo(400);
      assertThat(get(w, "/api/v1/series?match[]=up", null).statusCode()).isEqualTo(401);
      assertThat(get(w, "/api/v1/series?match[]=" + enc("up{"), "team-1").body()).contains("\"errorType\":\"bad_data\"");

      String metrics = get(w, "/metrics", null).body();
      assertThat(metrics).contains("weir_ingester_ingested_samples_total{user=\"team-1\"} 6.0");
      assertThat(metrics).contains("weir_discarded_samples_total{reason=\"metric_name_invalid\",user=\"team-1\"} 1.0");
      assertThat(metrics).contains("weir_ingester_active_series{user=\"team-1\"} 3.0");
      assertThat(metrics).contains("weir_request_duration_seconds_count{method=\"GET\",route=\"api_v1_series\",status_code=\"200\"}");
      assertThat(metrics).contains("weir_request_duration_seconds_count{method=\"gRPC\",route=\"/weir.Ingester/Push\",status_code=\"OK\"} 1");
      assertThat(metrics).contains("jvm_memory_used_bytes");

      int code = w.terminate(Duration.ofSeconds(30));
      assertThat(code).as("exit code after SIGTERM (128+15 when the JVM ran its hooks)").isIn(0, 143);
      assertThat(w.log()).contains("msg=\"received shutdown signal, stopping\"").contains("msg=\"weir stopped\"");
    }
  }
}
