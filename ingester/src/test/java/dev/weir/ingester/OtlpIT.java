package dev.weir.ingester;

import static io.opentelemetry.api.common.AttributeKey.stringKey;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.WeirProcess;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentSelector;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.View;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OTLP metrics from real clients into the built jar: the OpenTelemetry Java SDK (1.68, OTLP/HTTP
 * protobuf exporter, gzip) exports a counter, an up-down counter, a gauge and an explicit-bucket
 * histogram, and every value reads back exactly through {@code /api/v1/export} under the Prometheus
 * names, with {@code job}/{@code instance} from the resource and a {@code target_info}. An
 * exponential histogram is stored (as a native histogram) with the rest of its export. OTLP/JSON (the official proto's JSON mapping) is stored as well; bad bodies get a 4xx
 * with the reason.
 */
class OtlpIT {
  static final String TENANT = "otel";
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  static SdkMeterProvider provider(WeirProcess weir, String service) {
    OtlpHttpMetricExporter exporter = OtlpHttpMetricExporter.builder()
        .setEndpoint(weir.httpUrl() + "/otlp/v1/metrics").addHeader("X-Scope-OrgID", TENANT).setCompression("gzip")
        .build();
    Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(stringKey("service.name"), service,
        stringKey("service.instance.id"), "i-1", stringKey("deployment.environment"), "test")));
    return SdkMeterProvider.builder().setResource(resource)
        .registerMetricReader(PeriodicMetricReader.builder(exporter).setInterval(Duration.ofHours(1)).build())
        .registerView(InstrumentSelector.builder().setName("latency").build(), View.builder()
            .setAggregation(Aggregation.explicitBucketHistogram(List.of(1.0, 5.0, 10.0))).build())
        .registerView(InstrumentSelector.builder().setName("sizes").build(), View.builder()
            .setAggregation(Aggregation.base2ExponentialBucketHistogram()).build())
        .build();
  }

  /** Series of the job, by name and non-job/instance labels, to their samples as "value" text. */
  static Map<String, String> read(WeirProcess weir, String job) throws Exception {
    Map<String, String> out = new TreeMap<>();
    new ExportClient(weir.httpUrl()).export(TENANT, "{job=\"" + job + "\"}").forEach((labels, s) -> {
      assertThat(s.values()).as(labels).hasSize(1);
      out.put(labels.replace(",instance=\"i-1\"", "").replace(",job=\"" + job + "\"", ""),
          String.valueOf(s.values().get(0)));
    });
    return out;
  }

  @Test
  void theOpenTelemetrySdkExportsReadBackExactly() throws Exception {
    try (WeirProcess weir = WeirProcess.start(dir.resolve("weir"))) {
      SdkMeterProvider provider = provider(weir, "otlp-it");
      Meter meter = provider.get("weir-it");
      Attributes get = Attributes.of(stringKey("http.method"), "GET");
      var requests = meter.counterBuilder("http.requests").setUnit("{request}").build();
      requests.add(5, get);
      requests.add(7, get);
      var queue = meter.upDownCounterBuilder("queue.depth").build();
      queue.add(3);
      queue.add(-1);
      meter.gaugeBuilder("room.temperature").setUnit("Cel").build().set(21.5);
      var latency = meter.histogramBuilder("latency").setUnit("s").build();
      for (double v : new double[] {0.2, 3, 7}) {
        latency.record(v);
      }
      CompletableResultCode flushed = provider.forceFlush().join(30, TimeUnit.SECONDS);
      assertThat(flushed.isSuccess()).as("Weir accepted the export").isTrue();

      Map<String, String> got = read(weir, "otlp-it");
      assertThat(got).containsAllEntriesOf(Map.of(
          "{__name__=\"http_requests_total\",http_method=\"GET\"}", "12.0",
          "{__name__=\"queue_depth\"}", "2.0",
          "{__name__=\"room_temperature_celsius\"}", "21.5",
          "{__name__=\"latency_seconds_bucket\",le=\"1\"}", "1.0",
          "{__name__=\"latency_seconds_bucket\",le=\"5\"}", "2.0",
          "{__name__=\"latency_seconds_bucket\",le=\"10\"}", "3.0",
          "{__name__=\"latency_seconds_bucket\",le=\"+Inf\"}", "3.0",
          "{__name__=\"latency_seconds_sum\"}", "10.2",
          "{__name__=\"latency_seconds_count\"}", "3.0"));
      assertThat(got).hasSize(10);
      String targetInfo = got.keySet().stream().filter(k -> k.contains("target_info")).findFirst().orElseThrow();
      assertThat(targetInfo).contains("deployment_environment=\"test\"").contains("telemetry_sdk_language=\"java\"")
          .doesNotContain("service_name");
      provider.close();

      // An exponential histogram is stored as a native histogram with the rest of the export.
      SdkMeterProvider second = provider(weir, "otlp-exp");
      Meter m2 = second.get("weir-it");
      m2.histogramBuilder("sizes").build().record(42);
      m2.counterBuilder("kept").build().add(1);
      assertThat(second.forceFlush().join(30, TimeUnit.SECONDS).isSuccess()).isTrue();
      assertThat(read(weir, "otlp-exp")).containsKey("{__name__=\"kept_total\"}");
      second.close();
    }
  }

  static HttpResponse<String> post(WeirProcess weir, String type, byte[] body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(weir.httpUrl() + "/otlp/v1/metrics"))
        .header("Content-Type", type).header("X-Scope-OrgID", TENANT)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void jsonIsStoredAndBadBodiesGetAReason() throws Exception {
    try (WeirProcess weir = WeirProcess.start(dir.resolve("weir"))) {
      long now = System.currentTimeMillis();
      ExportMetricsServiceRequest req = ExportMetricsServiceRequest.newBuilder().addResourceMetrics(ResourceMetrics
          .newBuilder().setResource(io.opentelemetry.proto.resource.v1.Resource.newBuilder().addAttributes(KeyValue
              .newBuilder().setKey("service.name").setValue(AnyValue.newBuilder().setStringValue("json-job"))))
          .addScopeMetrics(ScopeMetrics.newBuilder().addMetrics(Metric.newBuilder().setName("jobs_done")
              .setSum(Sum.newBuilder().setIsMonotonic(true)
                  .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                  .addDataPoints(NumberDataPoint.newBuilder().setTimeUnixNano(now * 1_000_000).setAsInt(17))))
              .addMetrics(Metric.newBuilder().setName("deltas").setSum(Sum.newBuilder()
                  .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA)
                  .addDataPoints(NumberDataPoint.newBuilder().setTimeUnixNano(now * 1_000_000).setAsInt(1)))))).build();
      String json = JsonFormat.printer().print(req);
      HttpResponse<String> r = post(weir, "application/json", json.getBytes(StandardCharsets.UTF_8));
      assertThat(r.statusCode()).isEqualTo(400);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(r.body()).contains("metric \\\"deltas\\\"").contains("delta temporality");
      Map<String, ExportClient.Series> stored = new ExportClient(weir.httpUrl()).export(TENANT, "jobs_done_total");
      assertThat(stored).hasSize(1);
      ExportClient.Series s = stored.values().iterator().next();
      assertThat(s.labels()).isEqualTo("{__name__=\"jobs_done_total\",job=\"json-job\"}");
      assertThat(s.timestamps()).containsExactly(now);
      assertThat(s.values()).containsExactly(17.0);
      assertThat(weir.metric("weir_discarded_samples_total{reason=\"otlp_delta_temporality\",user=\"otel\"}"))
          .isEqualTo(1.0);

      HttpResponse<String> ok = post(weir, "application/x-protobuf", ExportMetricsServiceRequest.newBuilder()
          .addResourceMetrics(req.getResourceMetrics(0).toBuilder().setScopeMetrics(0, req.getResourceMetrics(0)
              .getScopeMetrics(0).toBuilder().removeMetrics(1))).build().toByteArray());
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(post(weir, "application/json", "{\"resourceMetrics\": [".getBytes(StandardCharsets.UTF_8)).body())
          .contains("not an OTLP ExportMetricsServiceRequest (JSON)");
      HttpResponse<String> text = post(weir, "text/plain", "x".getBytes(StandardCharsets.UTF_8));
      assertThat(text.statusCode()).isEqualTo(415);
      assertThat(post(weir, "application/x-protobuf", new byte[] {(byte) 0xff, 0x01}).statusCode()).isEqualTo(400);
    }
  }
}
