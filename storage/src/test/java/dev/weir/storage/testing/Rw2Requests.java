package dev.weir.storage.testing;

import dev.weir.proto.writev2.BucketSpan;
import dev.weir.proto.writev2.Exemplar;
import dev.weir.proto.writev2.Histogram;
import dev.weir.proto.writev2.Metadata;
import dev.weir.proto.writev2.Request;
import dev.weir.proto.writev2.Sample;
import dev.weir.proto.writev2.TimeSeries;
import java.util.HashMap;
import java.util.Map;

/**
 * A remote write 2.0 test client's request builder, on the classes generated from the official
 * {@code io.prometheus.write.v2} .proto: interns strings into the symbols table (first symbol the
 * empty string, as the specification requires) and builds series from label pairs. {@link
 * #fullRequest()} sets every field of every message. Not thread-safe.
 */
public final class Rw2Requests {
  private final Request.Builder request = Request.newBuilder().addSymbols("");
  private final Map<String, Integer> refs = new HashMap<>(Map.of("", 0));

  /** The symbol index of {@code s}, added when new. */
  public int ref(String s) {
    return refs.computeIfAbsent(s, k -> {
      request.addSymbols(k);
      return request.getSymbolsCount() - 1;
    });
  }

  /** A series builder with these labels (name, value, ...) as references. */
  public TimeSeries.Builder series(String... pairs) {
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    for (String p : pairs) {
      ts.addLabelsRefs(ref(p));
    }
    return ts;
  }

  public Rw2Requests add(TimeSeries.Builder ts) {
    request.addTimeseries(ts);
    return this;
  }

  /** A float series with one sample per (timestamp, value) pair. */
  public Rw2Requests floats(String[] labels, long... tsValue) {
    TimeSeries.Builder ts = series(labels);
    for (int i = 0; i + 1 < tsValue.length; i += 2) {
      ts.addSamples(Sample.newBuilder().setTimestamp(tsValue[i]).setValue(tsValue[i + 1]));
    }
    return add(ts);
  }

  public Request.Builder builder() {
    return request;
  }

  public Request build() {
    return request.build();
  }

  /**
   * An integer native histogram, consistent: 2 + 1 positive buckets (3, 2, 4), 1 negative (2),
   * zero count 1, so a count of 12 as Prometheus' {@code Histogram.Validate} requires.
   */
  public static Histogram intHistogram(long timestamp) {
    return Histogram.newBuilder().setCountInt(12).setSum(42.5).setSchema(3).setZeroThreshold(1e-128)
        .setZeroCountInt(1).addNegativeSpans(BucketSpan.newBuilder().setOffset(-2).setLength(1))
        .addNegativeDeltas(2).addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(2))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(3).setLength(1)).addPositiveDeltas(3)
        .addPositiveDeltas(-1).addPositiveDeltas(2).setResetHint(Histogram.ResetHint.RESET_HINT_NO)
        .setTimestamp(timestamp).build();
  }

  /** A float native histogram with custom buckets (schema -53): no negative buckets, as Prometheus requires. */
  public static Histogram floatHistogram(long timestamp) {
    return Histogram.newBuilder().setCountFloat(6.5).setSum(3.25).setSchema(-53).setZeroCountFloat(0)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(2)).addPositiveCounts(2.5)
        .addPositiveCounts(4).addCustomValues(0.1).addCustomValues(1).setResetHint(Histogram.ResetHint.RESET_HINT_GAUGE)
        .setTimestamp(timestamp).build();
  }

  /**
   * A request using every field of every message: float series with exemplars (with and without
   * labels), metadata (type, help, unit) and a created timestamp; an integer and a float histogram
   * series; a series that shares its labels with another but carries only metadata.
   */
  public static Rw2Requests fullRequest() {
    return fullRequest(0);
  }

  /** {@link #fullRequest()} with every timestamp moved by {@code base} ms. */
  public static Rw2Requests fullRequest(long base) {
    Rw2Requests r = new Rw2Requests();
    r.add(r.series("__name__", "http_requests_total", "code", "200", "job", "api")
        .addSamples(Sample.newBuilder().setTimestamp(base + 1_000).setValue(1))
        .addSamples(Sample.newBuilder().setTimestamp(base + 2_000).setValue(2.5))
        .addExemplars(Exemplar.newBuilder().addLabelsRefs(r.ref("trace_id")).addLabelsRefs(r.ref("abc123"))
            .setValue(2.5).setTimestamp(base + 1_999))
        .addExemplars(Exemplar.newBuilder().setValue(1))
        .setMetadata(Metadata.newBuilder().setType(Metadata.MetricType.METRIC_TYPE_COUNTER)
            .setHelpRef(r.ref("Requests served.")).setUnitRef(r.ref("requests")))
        .setCreatedTimestamp(base + 500));
    r.add(r.series("__name__", "rpc_duration_seconds", "job", "api").addHistograms(intHistogram(base + 1_000))
        .setMetadata(Metadata.newBuilder().setType(Metadata.MetricType.METRIC_TYPE_HISTOGRAM).setHelpRef(0)
            .setUnitRef(r.ref("seconds"))));
    r.add(r.series("__name__", "queue_depth", "job", "api").addHistograms(floatHistogram(base + 1_000))
        .setMetadata(Metadata.newBuilder().setType(Metadata.MetricType.METRIC_TYPE_GAUGEHISTOGRAM)));
    r.add(r.series("__name__", "temperature_celsius", "job", "api")
        .addSamples(Sample.newBuilder().setTimestamp(base + 1_000).setValue(-3.5))
        .setMetadata(Metadata.newBuilder().setType(Metadata.MetricType.METRIC_TYPE_GAUGE)
            .setHelpRef(r.ref("Temperature."))));
    return r;
  }
}
