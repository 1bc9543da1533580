package dev.weir.ingester.api;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.wire.HistogramProtos;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * OTLP metrics to Prometheus series, as Prometheus' OTLP receiver and Mimir's distributor convert
 * them (their {@code prometheusremotewrite} translator, "underscore escaping" naming):
 *
 * <ul>
 *   <li><b>Names</b>: characters outside {@code [a-zA-Z0-9_:]} become {@code _}, runs of {@code _}
 *       collapse, a leading digit gets a {@code _}. With suffixes on (the default, as Prometheus
 *       3; Mimir's {@code -distributor.otel-metric-suffixes-enabled} defaults to off): the unit
 *       in Prometheus words ({@code s} → {@code _seconds}, {@code By} → {@code _bytes},
 *       {@code By/s} → {@code _bytes_per_second}, annotations like {@code {packets}} dropped),
 *       {@code _total} for monotonic sums, {@code _ratio} for gauges of unit {@code 1}.
 *   <li><b>Labels</b>: data point attributes, sanitized the same way (a leading digit gets
 *       {@code key_}, a single leading {@code _} gets {@code key}); keys that collide after that
 *       have their values joined with {@code ;}. {@code job} is {@code service.namespace/service.name}
 *       (or {@code service.name}), {@code instance} is {@code service.instance.id}; the resource
 *       attributes listed in {@code promoteResourceAttributes} are added to every series (never
 *       replacing a data point's). The other resource attributes make one {@code target_info}
 *       series (value 1) per resource, at the newest sample time of that resource.
 *   <li><b>Types</b>: gauge; cumulative sum (monotonic: a counter); cumulative explicit histogram
 *       as {@code _bucket{le}} (cumulative counts, {@code +Inf} = count), {@code _sum} (when
 *       present), {@code _count}; summary as {@code {quantile}}, {@code _sum}, {@code _count};
 *       cumulative exponential histogram as a native histogram ({@link OtlpExponentialHistograms}:
 *       scale → schema, above 8 down-scaled). A point flagged "no recorded value" becomes
 *       Prometheus' stale marker.
 *   <li><b>Refused</b>, each counted and named, the rest kept: delta or unspecified temporality
 *       ({@code otlp_delta_temporality}, {@code otlp_unknown_temporality}: Weir stores cumulative
 *       series; run the Collector's {@code deltatocumulative} processor), exponential histograms
 *       with a scale below -4, explicit histograms whose bucket counts do not match the bounds or whose bounds are NaN or not
 *       increasing ({@code otlp_invalid_histogram}), metrics without a name or a data type
 *       ({@code otlp_invalid_metric}).
 * </ul>
 *
 * Exemplars of number and histogram points are kept as Prometheus' translator keeps them: labels
 * {@code trace_id} and {@code span_id} (lower-case hex, when set) plus the filtered attributes;
 * a histogram's exemplar goes to the first bucket whose bound is at least its value ({@code
 * +Inf} otherwise). Start (created) timestamps are not kept. Stateless and thread-safe.
 */
public final class OtlpTranslator {
  /** Prometheus' stale marker: a NaN with this exact bit pattern. */
  static final long STALE_NAN_BITS = 0x7ff0000000000002L;
  private static final Set<String> IDENTIFYING = Set.of("service.name", "service.namespace", "service.instance.id");
  private static final Map<String, String> UNITS = Map.ofEntries(
      Map.entry("d", "days"), Map.entry("h", "hours"), Map.entry("min", "minutes"), Map.entry("s", "seconds"),
      Map.entry("ms", "milliseconds"), Map.entry("us", "microseconds"), Map.entry("ns", "nanoseconds"),
      Map.entry("By", "bytes"), Map.entry("KiBy", "kibibytes"), Map.entry("MiBy", "mebibytes"),
      Map.entry("GiBy", "gibibytes"), Map.entry("TiBy", "tibibytes"), Map.entry("KBy", "kilobytes"),
      Map.entry("MBy", "megabytes"), Map.entry("GBy", "gigabytes"), Map.entry("TBy", "terabytes"),
      Map.entry("m", "meters"), Map.entry("V", "volts"), Map.entry("A", "amperes"), Map.entry("J", "joules"),
      Map.entry("W", "watts"), Map.entry("g", "grams"), Map.entry("Cel", "celsius"), Map.entry("Hz", "hertz"),
      Map.entry("%", "percent"));
  private static final Map<String, String> PER_UNITS = Map.of("s", "second", "m", "minute", "h", "hour", "d", "day",
      "w", "week", "mo", "month", "y", "year");

  /** A part of the request that was not stored: why, a message naming the metric, how many points. */
  public record Refusal(String reason, String message, int points) {}

  /** The series to store and what was refused. */
  public record Result(WriteRequest request, List<Refusal> refusals) {}

  private final boolean addSuffixes;
  private final List<String> promoteResourceAttributes;

  public OtlpTranslator(boolean addSuffixes, List<String> promoteResourceAttributes) {
    this.addSuffixes = addSuffixes;
    this.promoteResourceAttributes = List.copyOf(promoteResourceAttributes);
  }

  /** Flag definitions, with Mimir's {@code distributor.otel-*} names. */
  public static final class Flags {
    private final Flag<Boolean> suffixes;
    private final Flag<List<String>> promote;

    public Flags(FlagSet fs) {
      suffixes = fs.bool("distributor.otel-metric-suffixes-enabled", true, "OTLP: add the unit (_seconds, _bytes,"
          + " ...) and type (_total, _ratio) suffixes to metric names, as Prometheus 3 does. Mimir's default is"
          + " false.");
      promote = fs.list("distributor.otel-promote-resource-attributes", List.of(), "OTLP: resource attributes"
          + " added as labels to every series of the resource, comma-separated (e.g."
          + " k8s.namespace.name,k8s.pod.name). The others go to target_info.");
    }

    public OtlpTranslator build() {
      return new OtlpTranslator(suffixes.get(), promote.get());
    }
  }

  public Result translate(ExportMetricsServiceRequest request) {
    WriteRequest.Builder out = WriteRequest.newBuilder();
    List<Refusal> refusals = new ArrayList<>();
    Map<String, MetricMetadata> metadata = new TreeMap<>();
    for (ResourceMetrics rm : request.getResourceMetricsList()) {
      Map<String, String> resourceLabels = resourceLabels(rm.getResource().getAttributesList());
      long newest = Long.MIN_VALUE;
      for (ScopeMetrics sm : rm.getScopeMetricsList()) {
        for (Metric m : sm.getMetricsList()) {
          newest = Math.max(newest, metric(m, resourceLabels, out, refusals, metadata));
        }
      }
      Map<String, String> info = targetInfo(rm.getResource().getAttributesList(), resourceLabels);
      if (info != null && newest != Long.MIN_VALUE) {
        out.addTimeseries(series("target_info", info, Map.of(), newest, 1.0));
        metadata.putIfAbsent("target_info", MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.GAUGE)
            .setMetricFamilyName("target_info").setHelp("Target metadata").build());
      }
    }
    out.addAllMetadata(metadata.values());
    return new Result(out.build(), refusals);
  }

  /** job, instance and the promoted attributes of a resource. */
  private Map<String, String> resourceLabels(List<KeyValue> attrs) {
    Map<String, String> byKey = new LinkedHashMap<>();
    for (KeyValue kv : attrs) {
      byKey.put(kv.getKey(), text(kv.getValue()));
    }
    Map<String, String> out = new TreeMap<>();
    String name = byKey.get("service.name");
    String namespace = byKey.get("service.namespace");
    if (name != null) {
      out.put("job", namespace == null || namespace.isEmpty() ? name : namespace + "/" + name);
    }
    String instance = byKey.get("service.instance.id");
    if (instance != null) {
      out.put("instance", instance);
    }
    for (String key : promoteResourceAttributes) {
      String v = byKey.get(key);
      if (v != null) {
        addLabel(out, labelName(key), v);
      }
    }
    return out;
  }

  /** target_info's labels: job, instance and the attributes neither identifying nor promoted; null when none. */
  private @Nullable Map<String, String> targetInfo(List<KeyValue> attrs,
      Map<String, String> resourceLabels) {
    Map<String, String> out = new TreeMap<>();
    for (KeyValue kv : attrs) {
      if (!IDENTIFYING.contains(kv.getKey()) && !promoteResourceAttributes.contains(kv.getKey())) {
        addLabel(out, labelName(kv.getKey()), text(kv.getValue()));
      }
    }
    if (out.isEmpty()) {
      return null;
    }
    if (resourceLabels.containsKey("job")) {
      out.put("job", resourceLabels.get("job"));
    }
    if (resourceLabels.containsKey("instance")) {
      out.put("instance", resourceLabels.get("instance"));
    }
    return out;
  }

  /** Adds one metric's series; returns the newest sample time (ms), or Long.MIN_VALUE when none. */
  private long metric(Metric m, Map<String, String> resource, WriteRequest.Builder out, List<Refusal> refusals,
      Map<String, MetricMetadata> metadata) {
    if (m.getName().isEmpty() || m.getDataCase() == Metric.DataCase.DATA_NOT_SET) {
      refusals.add(new Refusal("otlp_invalid_metric", "metric \"" + m.getName() + "\" has "
          + (m.getName().isEmpty() ? "no name" : "no data type"), points(m)));
      return Long.MIN_VALUE;
    }
    String unit = addSuffixes ? promUnit(m.getUnit()) : "";
    long newest = Long.MIN_VALUE;
    switch (m.getDataCase()) {
      case GAUGE -> {
        String name = name(m.getName(), unit, "1".equals(m.getUnit()) ? "ratio" : null);
        meta(metadata, name, MetricMetadata.MetricType.GAUGE, m, unit);
        for (NumberDataPoint p : m.getGauge().getDataPointsList()) {
          newest = Math.max(newest, number(out, name, resource, p));
        }
      }
      case SUM -> {
        String why = temporality(m.getSum().getAggregationTemporality());
        if (why != null) {
          refusals.add(new Refusal(why, "metric \"" + m.getName() + "\" (sum): " + describe(why), points(m)));
          return newest;
        }
        boolean counter = m.getSum().getIsMonotonic();
        String name = name(m.getName(), unit, counter ? "total" : null);
        meta(metadata, name, counter ? MetricMetadata.MetricType.COUNTER : MetricMetadata.MetricType.GAUGE, m, unit);
        for (NumberDataPoint p : m.getSum().getDataPointsList()) {
          newest = Math.max(newest, number(out, name, resource, p));
        }
      }
      case HISTOGRAM -> {
        String why = temporality(m.getHistogram().getAggregationTemporality());
        if (why != null) {
          refusals.add(new Refusal(why, "metric \"" + m.getName() + "\" (histogram): " + describe(why), points(m)));
          return newest;
        }
        String name = name(m.getName(), unit, null);
        meta(metadata, name, MetricMetadata.MetricType.HISTOGRAM, m, unit);
        for (HistogramDataPoint p : m.getHistogram().getDataPointsList()) {
          String bad = checkHistogram(p);
          if (bad != null) {
            refusals.add(new Refusal("otlp_invalid_histogram", "metric \"" + m.getName() + "\" "
                + labels(p.getAttributesList()) + ": " + bad, 1));
            continue;
          }
          newest = Math.max(newest, histogram(out, name, resource, p));
        }
      }
      case SUMMARY -> {
        String name = name(m.getName(), unit, null);
        meta(metadata, name, MetricMetadata.MetricType.SUMMARY, m, unit);
        for (SummaryDataPoint p : m.getSummary().getDataPointsList()) {
          newest = Math.max(newest, summary(out, name, resource, p));
        }
      }
      case EXPONENTIAL_HISTOGRAM -> {
        String why = temporality(m.getExponentialHistogram().getAggregationTemporality());
        if (why != null) {
          refusals.add(new Refusal(why, "metric \"" + m.getName() + "\" (exponential histogram): " + describe(why),
              points(m)));
          return newest;
        }
        String name = name(m.getName(), unit, null);
        meta(metadata, name, MetricMetadata.MetricType.HISTOGRAM, m, unit);
        for (ExponentialHistogramDataPoint p : m.getExponentialHistogram().getDataPointsList()) {
          String bad = OtlpExponentialHistograms.problem(p);
          if (bad != null) {
            refusals.add(new Refusal("otlp_invalid_histogram", "metric \"" + m.getName() + "\" "
                + labels(p.getAttributesList()) + ": " + bad, 1));
            continue;
          }
          long t = millis(p.getTimeUnixNano());
          NativeHistogram h = OtlpExponentialHistograms.convert(p, Double.longBitsToDouble(STALE_NAN_BITS),
              (p.getFlags() & 1) != 0);
          TimeSeries labelsOnly = series(name, resource, attributes(p.getAttributesList()), t, 0);
          out.addTimeseries(labelsOnly.toBuilder().clearSamples().addHistograms(HistogramProtos.toProto(h, t)));
          newest = Math.max(newest, t);
        }
      }
      default -> refusals.add(new Refusal("otlp_invalid_metric", "metric \"" + m.getName() + "\" has the"
          + " unknown data type " + m.getDataCase(), points(m)));
    }
    return newest;
  }

  private static String describe(String reason) {
    return reason.equals("otlp_delta_temporality")
        ? "delta temporality is not supported: send cumulative (the Collector's deltatocumulative processor converts)"
        : "the aggregation temporality is unspecified: it must be cumulative";
  }

  private static @Nullable String temporality(AggregationTemporality t) {
    return switch (t) {
      case AGGREGATION_TEMPORALITY_CUMULATIVE -> null;
      case AGGREGATION_TEMPORALITY_DELTA -> "otlp_delta_temporality";
      default -> "otlp_unknown_temporality";
    };
  }

  private static int points(Metric m) {
    return switch (m.getDataCase()) {
      case GAUGE -> m.getGauge().getDataPointsCount();
      case SUM -> m.getSum().getDataPointsCount();
      case HISTOGRAM -> m.getHistogram().getDataPointsCount();
      case EXPONENTIAL_HISTOGRAM -> m.getExponentialHistogram().getDataPointsCount();
      case SUMMARY -> m.getSummary().getDataPointsCount();
      default -> 1;
    };
  }

  private static @Nullable String checkHistogram(HistogramDataPoint p) {
    int bounds = p.getExplicitBoundsCount();
    if (p.getBucketCountsCount() != 0 && p.getBucketCountsCount() != bounds + 1) {
      return p.getBucketCountsCount() + " bucket counts for " + bounds + " bounds (want bounds + 1)";
    }
    for (int i = 0; i < bounds; i++) {
      double b = p.getExplicitBounds(i);
      if (Double.isNaN(b)) {
        return "bucket bound " + i + " is NaN";
      }
      if (i > 0 && b <= p.getExplicitBounds(i - 1)) {
        return "bucket bounds are not increasing at " + i;
      }
    }
    return null;
  }

  private long number(WriteRequest.Builder out, String name, Map<String, String> resource, NumberDataPoint p) {
    double v = switch (p.getValueCase()) {
      case AS_INT -> p.getAsInt();
      default -> p.getAsDouble();
    };
    long t = millis(p.getTimeUnixNano());
    TimeSeries ts = series(name, resource, attributes(p.getAttributesList()), t, value(v, p.getFlags()));
    if (p.getExemplarsCount() > 0) {
      TimeSeries.Builder b = ts.toBuilder();
      p.getExemplarsList().forEach(e -> b.addExemplars(exemplar(e)));
      ts = b.build();
    }
    out.addTimeseries(ts);
    return t;
  }

  /** An OTLP exemplar as Prometheus' translator writes it. */
  private static dev.weir.proto.prompb.Exemplar exemplar(io.opentelemetry.proto.metrics.v1.Exemplar e) {
    dev.weir.proto.prompb.Exemplar.Builder b = dev.weir.proto.prompb.Exemplar.newBuilder()
        .setTimestamp(millis(e.getTimeUnixNano()))
        .setValue(e.getValueCase() == io.opentelemetry.proto.metrics.v1.Exemplar.ValueCase.AS_INT ? e.getAsInt()
            : e.getAsDouble());
    Map<String, String> labels = attributes(e.getFilteredAttributesList());
    if (!e.getTraceId().isEmpty()) {
      labels.put("trace_id", java.util.HexFormat.of().formatHex(e.getTraceId().toByteArray()));
    }
    if (!e.getSpanId().isEmpty()) {
      labels.put("span_id", java.util.HexFormat.of().formatHex(e.getSpanId().toByteArray()));
    }
    labels.forEach((k, v) -> b.addLabels(Label.newBuilder().setName(k).setValue(v)));
    return b.build();
  }

  /** The bucket (index into the bounds; bounds count = +Inf) an exemplar of this value belongs to. */
  private static int bucketOf(HistogramDataPoint p, double v) {
    for (int i = 0; i < p.getExplicitBoundsCount(); i++) {
      if (v <= p.getExplicitBounds(i)) {
        return i;
      }
    }
    return p.getExplicitBoundsCount();
  }

  /** {@code ts} with the exemplars of bucket {@code bucket} (-1: all of them, when the point has no buckets). */
  private static TimeSeries withExemplars(TimeSeries ts, HistogramDataPoint p, int bucket) {
    TimeSeries.Builder b = null;
    for (io.opentelemetry.proto.metrics.v1.Exemplar e : p.getExemplarsList()) {
      double v = e.getValueCase() == io.opentelemetry.proto.metrics.v1.Exemplar.ValueCase.AS_INT ? e.getAsInt()
          : e.getAsDouble();
      if (bucket < 0 || bucketOf(p, v) == bucket) {
        b = b == null ? ts.toBuilder() : b;
        b.addExemplars(exemplar(e));
      }
    }
    return b == null ? ts : b.build();
  }

  private long histogram(WriteRequest.Builder out, String name, Map<String, String> resource, HistogramDataPoint p) {
    long t = millis(p.getTimeUnixNano());
    Map<String, String> attrs = attributes(p.getAttributesList());
    int flags = p.getFlags();
    long cumulative = 0;
    for (int i = 0; i < p.getExplicitBoundsCount() && p.getBucketCountsCount() > 0; i++) {
      cumulative += p.getBucketCounts(i);
      Map<String, String> withLe = new TreeMap<>(attrs);
      withLe.put("le", le(p.getExplicitBounds(i)));
      out.addTimeseries(withExemplars(series(name + "_bucket", resource, withLe, t, value(cumulative, flags)), p, i));
    }
    Map<String, String> inf = new TreeMap<>(attrs);
    inf.put("le", "+Inf");
    out.addTimeseries(withExemplars(series(name + "_bucket", resource, inf, t, value(p.getCount(), flags)), p,
        p.getBucketCountsCount() > 0 ? p.getExplicitBoundsCount() : -1));
    if (p.hasSum()) {
      out.addTimeseries(series(name + "_sum", resource, attrs, t, value(p.getSum(), flags)));
    }
    out.addTimeseries(series(name + "_count", resource, attrs, t, value(p.getCount(), flags)));
    return t;
  }

  private long summary(WriteRequest.Builder out, String name, Map<String, String> resource, SummaryDataPoint p) {
    long t = millis(p.getTimeUnixNano());
    Map<String, String> attrs = attributes(p.getAttributesList());
    int flags = p.getFlags();
    for (SummaryDataPoint.ValueAtQuantile q : p.getQuantileValuesList()) {
      Map<String, String> withQ = new TreeMap<>(attrs);
      withQ.put("quantile", le(q.getQuantile()));
      out.addTimeseries(series(name, resource, withQ, t, value(q.getValue(), flags)));
    }
    out.addTimeseries(series(name + "_sum", resource, attrs, t, value(p.getSum(), flags)));
    out.addTimeseries(series(name + "_count", resource, attrs, t, value(p.getCount(), flags)));
    return t;
  }

  private static double value(double v, int flags) {
    // DataPointFlags.FLAG_NO_RECORDED_VALUE: the series went away; Prometheus writes a stale marker.
    return (flags & 1) != 0 ? Double.longBitsToDouble(STALE_NAN_BITS) : v;
  }

  private static long millis(long unixNano) {
    return unixNano / 1_000_000L;
  }

  /** Prometheus' {@code le}/{@code quantile} text: the shortest decimal, no exponent ("0.005", "1", "1000000"). */
  static String le(double v) {
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (Double.isNaN(v)) {
      return "NaN";
    }
    return new BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
  }

  private static TimeSeries series(String name, Map<String, String> resource, Map<String, String> point, long t,
      double v) {
    Map<String, String> all = new TreeMap<>(resource);
    all.putAll(point); // a data point's attribute wins over a promoted resource attribute
    all.put("__name__", name);
    TimeSeries.Builder b = TimeSeries.newBuilder();
    all.forEach((k, val) -> b.addLabels(Label.newBuilder().setName(k).setValue(val)));
    return b.addSamples(Sample.newBuilder().setTimestamp(t).setValue(v)).build();
  }

  private static Map<String, String> attributes(List<KeyValue> attrs) {
    Map<String, String> out = new TreeMap<>();
    for (KeyValue kv : attrs) {
      addLabel(out, labelName(kv.getKey()), text(kv.getValue()));
    }
    return out;
  }

  private static String labels(List<KeyValue> attrs) {
    return attributes(attrs).toString();
  }

  private static void addLabel(Map<String, String> out, String key, String value) {
    out.merge(key, value, (a, b) -> a + ";" + b);
  }

  private static void meta(Map<String, MetricMetadata> metadata, String name, MetricMetadata.MetricType type, Metric m,
      String unit) {
    metadata.putIfAbsent(name, MetricMetadata.newBuilder().setType(type).setMetricFamilyName(name)
        .setHelp(m.getDescription()).setUnit(unit).build());
  }

  /** An attribute value as label text (arrays and maps as their JSON-like text). */
  static String text(AnyValue v) {
    return switch (v.getValueCase()) {
      case STRING_VALUE -> v.getStringValue();
      case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
      case INT_VALUE -> Long.toString(v.getIntValue());
      case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
      case ARRAY_VALUE -> {
        List<String> parts = new ArrayList<>();
        v.getArrayValue().getValuesList().forEach(x -> parts.add(quote(x)));
        yield "[" + String.join(",", parts) + "]";
      }
      case KVLIST_VALUE -> {
        List<String> parts = new ArrayList<>();
        v.getKvlistValue().getValuesList().forEach(kv -> parts.add("\"" + kv.getKey() + "\":" + quote(kv.getValue())));
        yield "{" + String.join(",", parts) + "}";
      }
      case BYTES_VALUE -> java.util.Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray());
      default -> "";
    };
  }

  private static String quote(AnyValue v) {
    return v.getValueCase() == AnyValue.ValueCase.STRING_VALUE ? "\"" + v.getStringValue() + "\"" : text(v);
  }

  /** The metric name with the unit and type suffixes (when on), sanitized. */
  private String name(String otel, String unit, @Nullable String typeSuffix) {
    String name = sanitizeName(otel);
    if (!addSuffixes) {
      return name;
    }
    if (!unit.isEmpty() && !name.endsWith("_" + unit) && !name.equals(unit)) {
      name = name + "_" + unit;
    }
    if (typeSuffix != null && !name.endsWith("_" + typeSuffix)) {
      name = name + "_" + typeSuffix;
    }
    return name;
  }

  /** An OTel unit in Prometheus words ("s" → "seconds", "By/s" → "bytes_per_second"); "" for none or "1". */
  static String promUnit(String unit) {
    String u = unit.replaceAll("\\{[^}]*\\}", "").strip();
    if (u.isEmpty() || u.equals("1")) {
      return "";
    }
    int slash = u.indexOf('/');
    if (slash >= 0) {
      String main = u.substring(0, slash).strip();
      String per = u.substring(slash + 1).strip();
      String mainWord = main.isEmpty() ? "" : UNITS.getOrDefault(main, main);
      String perWord = PER_UNITS.getOrDefault(per, UNITS.getOrDefault(per, per));
      String joined = mainWord.isEmpty() ? "per_" + perWord : mainWord + "_per_" + perWord;
      return sanitizeName(joined);
    }
    return sanitizeName(UNITS.getOrDefault(u, u));
  }

  /** A metric name: invalid characters to {@code _}, runs of {@code _} collapsed, no leading digit. */
  static String sanitizeName(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_';
      char out = ok ? c : '_';
      if (out == '_' && b.length() > 0 && b.charAt(b.length() - 1) == '_') {
        continue;
      }
      b.append(out);
    }
    if (b.length() > 0 && b.charAt(0) >= '0' && b.charAt(0) <= '9') {
      b.insert(0, '_');
    }
    return b.toString();
  }

  /** A label name: invalid characters to {@code _}; a leading digit gets {@code key_}, a single leading {@code _} {@code key}. */
  static String labelName(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      b.append(ok ? c : '_');
    }
    String out = b.toString();
    if (out.isEmpty()) {
      return "key_";
    }
    if (out.charAt(0) >= '0' && out.charAt(0) <= '9') {
      return "key_" + out;
    }
    if (out.startsWith("_") && !out.startsWith("__")) {
      return "key" + out;
    }
    return out;
  }
}
