package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogram;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.metrics.v1.Summary;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.opentelemetry.proto.resource.v1.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class OtlpTranslatorTest {
  static final long T = 1_700_000_000_123L;
  static final long NANOS = T * 1_000_000L + 456_789;

  static KeyValue attr(String k, String v) {
    return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setStringValue(v)).build();
  }

  static NumberDataPoint point(double v, KeyValue... attrs) {
    return NumberDataPoint.newBuilder().setTimeUnixNano(NANOS).setAsDouble(v).addAllAttributes(List.of(attrs)).build();
  }

  static ExportMetricsServiceRequest request(Resource resource, Metric... metrics) {
    return ExportMetricsServiceRequest.newBuilder().addResourceMetrics(ResourceMetrics.newBuilder()
        .setResource(resource).addScopeMetrics(ScopeMetrics.newBuilder().addAllMetrics(List.of(metrics)))).build();
  }

  static ExportMetricsServiceRequest request(Metric... metrics) {
    return request(Resource.getDefaultInstance(), metrics);
  }

  /** Each series as "name{labels} t=v" text, sorted. */
  static List<String> text(OtlpTranslator.Result r) {
    List<String> out = new ArrayList<>();
    for (TimeSeries ts : r.request().getTimeseriesList()) {
      Map<String, String> labels = new TreeMap<>();
      String name = "";
      for (Label l : ts.getLabelsList()) {
        if (l.getName().equals("__name__")) {
          name = l.getValue();
        } else {
          labels.put(l.getName(), l.getValue());
        }
      }
      assertThat(ts.getSamplesCount()).isOne();
      out.add(name + labels + " " + (ts.getSamples(0).getTimestamp() - T) + "=" + ts.getSamples(0).getValue());
    }
    out.sort(null);
    return out;
  }

  final OtlpTranslator translator = new OtlpTranslator(true, List.of("k8s.pod.name"));

  @Test
  void gaugesAndSumsGetPrometheusNamesUnitsAndTypeSuffixes() {
    Metric counter = Metric.newBuilder().setName("http.server.requests").setUnit("{request}").setDescription("Requests.")
        .setSum(Sum.newBuilder().setIsMonotonic(true)
            .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
            .addDataPoints(point(12, attr("http.method", "GET")))).build();
    Metric upDown = Metric.newBuilder().setName("queue.size").setSum(Sum.newBuilder()
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
        .addDataPoints(point(-3))).build();
    Metric memory = Metric.newBuilder().setName("process.memory").setUnit("By")
        .setGauge(Gauge.newBuilder().addDataPoints(NumberDataPoint.newBuilder().setTimeUnixNano(NANOS).setAsInt(4096)))
        .build();
    Metric ratio = Metric.newBuilder().setName("cpu.utilization").setUnit("1")
        .setGauge(Gauge.newBuilder().addDataPoints(point(0.25))).build();
    Metric rate = Metric.newBuilder().setName("net.io_rate").setUnit("By/s")
        .setGauge(Gauge.newBuilder().addDataPoints(point(10))).build();
    Metric already = Metric.newBuilder().setName("request_duration_seconds").setUnit("s")
        .setGauge(Gauge.newBuilder().addDataPoints(point(1))).build();
    OtlpTranslator.Result r = translator.translate(request(counter, upDown, memory, ratio, rate, already));
    assertThat(r.refusals()).isEmpty();
    assertThat(text(r)).containsExactly(
        "cpu_utilization_ratio{} 0=0.25",
        "http_server_requests_total{http_method=GET} 0=12.0",
        "net_io_rate_bytes_per_second{} 0=10.0",
        "process_memory_bytes{} 0=4096.0",
        "queue_size{} 0=-3.0",
        "request_duration_seconds{} 0=1.0");
    assertThat(r.request().getMetadataList()).contains(MetricMetadata.newBuilder()
        .setType(MetricMetadata.MetricType.COUNTER).setMetricFamilyName("http_server_requests_total")
        .setHelp("Requests.").build());
    assertThat(new OtlpTranslator(false, List.of()).translate(request(counter, memory)).request().getTimeseriesList())
        .extracting(ts -> ts.getLabelsList().stream().filter(l -> l.getName().equals("__name__")).findFirst()
            .orElseThrow().getValue())
        .as("suffixes off: sanitized names only").containsExactly("http_server_requests", "process_memory");
  }

  @Test
  void explicitHistogramsBecomeCumulativeBucketsSumAndCountAndSummariesQuantiles() {
    Metric h = Metric.newBuilder().setName("latency").setUnit("ms").setHistogram(Histogram.newBuilder()
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
        .addDataPoints(HistogramDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(6).setSum(123.5)
            .addAllExplicitBounds(List.of(0.005, 1.0, 2.5e6)).addAllBucketCounts(List.of(1L, 2L, 0L, 3L))
            .addAttributes(attr("route", "/a")))).build();
    Metric s = Metric.newBuilder().setName("rpc.duration").setSummary(Summary.newBuilder()
        .addDataPoints(SummaryDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(10).setSum(4.5)
            .addQuantileValues(SummaryDataPoint.ValueAtQuantile.newBuilder().setQuantile(0.5).setValue(0.3))
            .addQuantileValues(SummaryDataPoint.ValueAtQuantile.newBuilder().setQuantile(0.99).setValue(1.2)))).build();
    assertThat(text(translator.translate(request(h, s)))).containsExactly(
        "latency_milliseconds_bucket{le=+Inf, route=/a} 0=6.0",
        "latency_milliseconds_bucket{le=0.005, route=/a} 0=1.0",
        "latency_milliseconds_bucket{le=1, route=/a} 0=3.0",
        "latency_milliseconds_bucket{le=2500000, route=/a} 0=3.0",
        "latency_milliseconds_count{route=/a} 0=6.0",
        "latency_milliseconds_sum{route=/a} 0=123.5",
        "rpc_duration_count{} 0=10.0",
        "rpc_duration_sum{} 0=4.5",
        "rpc_duration{quantile=0.5} 0=0.3",
        "rpc_duration{quantile=0.99} 0=1.2");
  }

  @Test
  void resourceAttributesGiveJobInstancePromotedLabelsAndOneTargetInfo() {
    Resource res = Resource.newBuilder().addAttributes(attr("service.name", "checkout"))
        .addAttributes(attr("service.namespace", "shop")).addAttributes(attr("service.instance.id", "pod-7"))
        .addAttributes(attr("k8s.pod.name", "checkout-7")).addAttributes(attr("host.arch", "amd64")).build();
    Metric g = Metric.newBuilder().setName("up").setGauge(Gauge.newBuilder().addDataPoints(point(1))).build();
    assertThat(text(translator.translate(request(res, g)))).containsExactly(
        "target_info{host_arch=amd64, instance=pod-7, job=shop/checkout} 0=1.0",
        "up{instance=pod-7, job=shop/checkout, k8s_pod_name=checkout-7} 0=1.0");
  }

  @Test
  void labelNamesAreSanitizedAndCollisionsJoined() {
    Metric g = Metric.newBuilder().setName("2xx.count").setGauge(Gauge.newBuilder().addDataPoints(point(1,
        attr("a.b", "x"), attr("a-b", "y"), attr("9lives", "z"), attr("_hidden", "h"), attr("__kept", "k")))).build();
    assertThat(text(translator.translate(request(g)))).containsExactly(
        "_2xx_count{__kept=k, a_b=x;y, key_9lives=z, key_hidden=h} 0=1.0");
  }

  @Test
  void deltaUnknownTemporalityExponentialAndBrokenHistogramsAreRefusedByNameAndTheRestKept() {
    Metric delta = Metric.newBuilder().setName("d").setSum(Sum.newBuilder().setIsMonotonic(true)
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA)
        .addDataPoints(point(1)).addDataPoints(point(2))).build();
    Metric unknown = Metric.newBuilder().setName("u").setHistogram(Histogram.newBuilder()
        .addDataPoints(HistogramDataPoint.newBuilder().setCount(1))).build();
    Metric exp = Metric.newBuilder().setName("e").setExponentialHistogram(ExponentialHistogram.newBuilder()
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
        .addDataPoints(ExponentialHistogramDataPoint.newBuilder().setCount(3).setScale(-5))).build();
    Metric broken = Metric.newBuilder().setName("b").setHistogram(Histogram.newBuilder()
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
        .addDataPoints(HistogramDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(2)
            .addAllExplicitBounds(List.of(1.0, Double.NaN)).addAllBucketCounts(List.of(1L, 1L, 0L)))
        .addDataPoints(HistogramDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(2)
            .addAllExplicitBounds(List.of(1.0)).addAllBucketCounts(List.of(2L)))
        .addDataPoints(HistogramDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(2)
            .addAllExplicitBounds(List.of(1.0)).addAllBucketCounts(List.of(1L, 1L)))).build();
    Metric noType = Metric.newBuilder().setName("t").build();
    Metric fine = Metric.newBuilder().setName("fine").setGauge(Gauge.newBuilder().addDataPoints(point(5))).build();
    OtlpTranslator.Result r = translator.translate(request(delta, unknown, exp, broken, noType, fine));
    assertThat(r.refusals()).extracting(OtlpTranslator.Refusal::reason).containsExactly("otlp_delta_temporality",
        "otlp_unknown_temporality", "otlp_invalid_histogram", "otlp_invalid_histogram", "otlp_invalid_histogram",
        "otlp_invalid_metric");
    assertThat(r.refusals()).extracting(OtlpTranslator.Refusal::points).containsExactly(2, 1, 1, 1, 1, 1);
    assertThat(r.refusals().get(0).message()).contains("metric \"d\"").contains("delta temporality");
    assertThat(r.refusals().get(3).message()).contains("metric \"b\"").contains("bound 1 is NaN");
    assertThat(r.refusals().get(4).message()).contains("1 bucket counts for 1 bounds");
    assertThat(text(r)).containsExactly("b_bucket{le=+Inf} 0=2.0", "b_bucket{le=1} 0=1.0", "b_count{} 0=2.0",
        "fine{} 0=5.0");
  }

  @Test
  void exponentialHistogramsBecomeNativeHistogramsAsPrometheusConvertsThem() {
    // Scale 2, positive buckets from OTLP index -1 (Prometheus index 0): 1, 2, 0, 0, 0, 3 (a gap of 3
    // empty buckets splits the span), negative bucket at OTLP index 4 (Prometheus 5): 7.
    ExponentialHistogramDataPoint p = ExponentialHistogramDataPoint.newBuilder().setTimeUnixNano(NANOS)
        .setScale(2).setCount(14).setSum(12.5).setZeroCount(1).setZeroThreshold(0.001)
        .setPositive(ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(-1)
            .addAllBucketCounts(List.of(1L, 2L, 0L, 0L, 0L, 3L)))
        .setNegative(ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(4).addBucketCounts(7))
        .addAttributes(io.opentelemetry.proto.common.v1.KeyValue.newBuilder().setKey("route")
            .setValue(io.opentelemetry.proto.common.v1.AnyValue.newBuilder().setStringValue("/a")))
        .build();
    Metric exp = Metric.newBuilder().setName("latency").setUnit("s").setExponentialHistogram(
        ExponentialHistogram.newBuilder().setAggregationTemporality(
            AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE).addDataPoints(p)).build();
    OtlpTranslator.Result r = translator.translate(request(exp));
    assertThat(r.refusals()).isEmpty();
    dev.weir.proto.prompb.TimeSeries ts = r.request().getTimeseriesList().stream()
        .filter(t -> t.getHistogramsCount() > 0).findFirst().orElseThrow();
    assertThat(ts.getSamplesCount()).isZero();
    assertThat(ts.getLabelsList()).extracting(l -> l.getName() + "=" + l.getValue())
        .contains("__name__=latency_seconds", "route=/a");
    dev.weir.storage.wire.HistogramProtos.Decoded d = dev.weir.storage.wire.HistogramProtos.fromProto(ts.getHistograms(0));
    assertThat(d.problem()).as("%s", d.problem()).isNull();
    dev.weir.storage.tsdb.chunk.NativeHistogram h = d.histogram();
    assertThat(h).isEqualTo(new dev.weir.storage.tsdb.chunk.NativeHistogram(false, 0, 2, 0.001, 1, 14, 12.5,
        new int[] {0, 2, 3, 1}, new double[] {1, 2, 3}, new int[] {5, 1}, new double[] {7}, new double[0]));
    assertThat(ts.getHistograms(0).getTimestamp()).isEqualTo(T);
    // A count that disagrees with the buckets (1 + 6 + 7 = 14) reaches the push path's count rule.
    Metric wrong = exp.toBuilder().setExponentialHistogram(exp.getExponentialHistogram().toBuilder()
        .setDataPoints(0, p.toBuilder().setCount(13))).build();
    dev.weir.proto.prompb.Histogram sent = translator.translate(request(wrong)).request().getTimeseriesList().stream()
        .filter(t -> t.getHistogramsCount() > 0).findFirst().orElseThrow().getHistograms(0);
    assertThat(dev.weir.storage.wire.HistogramProtos.fromProto(sent).problem().reason())
        .isEqualTo("native_histogram_count_mismatch");
  }

  @Test
  void exponentialHistogramsAboveScale8AreDownScaled() {
    // Scale 10: two steps down to schema 8; OTLP indexes 0..7 -> (i >> 2) + 1 = 1, 1, 1, 1, 2, 2, 2, 2.
    ExponentialHistogramDataPoint p = ExponentialHistogramDataPoint.newBuilder().setTimeUnixNano(NANOS)
        .setScale(10).setCount(8).setSum(8)
        .setPositive(ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(0)
            .addAllBucketCounts(List.of(1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L))).build();
    dev.weir.storage.tsdb.chunk.NativeHistogram h = OtlpExponentialHistograms.convert(p, 0, false);
    assertThat(h.schema()).isEqualTo(8);
    assertThat(h.positiveSpans()).containsExactly(1, 2);
    assertThat(h.positiveBuckets()).containsExactly(4, 4);
    assertThat(h.checkLayout()).isNull();
  }

  @Test
  void aPointWithoutARecordedValueIsAStaleMarker() {
    Metric g = Metric.newBuilder().setName("gone").setGauge(Gauge.newBuilder()
        .addDataPoints(point(7).toBuilder().setFlags(1))).build();
    double v = translator.translate(request(g)).request().getTimeseries(0).getSamples(0).getValue();
    assertThat(Double.doubleToRawLongBits(v)).isEqualTo(OtlpTranslator.STALE_NAN_BITS);
  }

  @Test
  void unitsAndLeValues() {
    assertThat(OtlpTranslator.promUnit("s")).isEqualTo("seconds");
    assertThat(OtlpTranslator.promUnit("{packets}/s")).isEqualTo("per_second");
    assertThat(OtlpTranslator.promUnit("KiBy")).isEqualTo("kibibytes");
    assertThat(OtlpTranslator.promUnit("widgets")).isEqualTo("widgets");
    assertThat(OtlpTranslator.le(0.1)).isEqualTo("0.1");
    assertThat(OtlpTranslator.le(10.0)).isEqualTo("10");
    assertThat(OtlpTranslator.le(1e-9)).isEqualTo("0.000000001");
  }

  @Test
  void exemplarsOfNumberPointsAndHistogramBucketsAreKeptAsPrometheusKeepsThem() {
    io.opentelemetry.proto.metrics.v1.Exemplar slow = io.opentelemetry.proto.metrics.v1.Exemplar.newBuilder()
        .setTimeUnixNano(NANOS).setAsDouble(7).setTraceId(com.google.protobuf.ByteString.copyFrom(new byte[] {1, 2}))
        .setSpanId(com.google.protobuf.ByteString.copyFrom(new byte[] {(byte) 0xab})).addFilteredAttributes(
            attr("user", "u1")).build();
    io.opentelemetry.proto.metrics.v1.Exemplar huge = slow.toBuilder().setAsDouble(1e9).clearSpanId().build();
    Metric h = Metric.newBuilder().setName("latency").setHistogram(Histogram.newBuilder()
        .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
        .addDataPoints(HistogramDataPoint.newBuilder().setTimeUnixNano(NANOS).setCount(3).addExplicitBounds(5)
            .addExplicitBounds(10).addBucketCounts(1).addBucketCounts(1).addBucketCounts(1)
            .addExemplars(slow).addExemplars(huge))).build();
    Metric g = Metric.newBuilder().setName("temp").setGauge(Gauge.newBuilder().addDataPoints(point(3).toBuilder()
        .addExemplars(slow.toBuilder().clearFilteredAttributes().setAsInt(3)))).build();
    Map<String, String> byLe = new TreeMap<>();
    for (TimeSeries ts : translator.translate(request(h, g)).request().getTimeseriesList()) {
      String le = "";
      String name = "";
      for (Label l : ts.getLabelsList()) {
        le = l.getName().equals("le") ? l.getValue() : le;
        name = l.getName().equals("__name__") ? l.getValue() : name;
      }
      for (dev.weir.proto.prompb.Exemplar e : ts.getExemplarsList()) {
        assertThat(e.getTimestamp()).isEqualTo(T);
        StringBuilder sb = new StringBuilder();
        e.getLabelsList().forEach(l -> sb.append(l.getName()).append('=').append(l.getValue()).append(' '));
        byLe.merge(name + "/" + le, sb.toString().trim() + " v=" + e.getValue(), (a, b) -> a + "; " + b);
      }
    }
    assertThat(byLe).containsExactly(
        Map.entry("latency_bucket/+Inf", "trace_id=0102 user=u1 v=1.0E9"),
        Map.entry("latency_bucket/10", "span_id=ab trace_id=0102 user=u1 v=7.0"),
        Map.entry("temp/", "span_id=ab trace_id=0102 v=3.0"));
  }
}
