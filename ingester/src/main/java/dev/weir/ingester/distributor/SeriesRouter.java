package dev.weir.ingester.distributor;

import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PushErrors;
import dev.weir.ingester.push.Validator;
import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.HistogramAdmission;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.SeriesHash;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.HistogramProtos;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.storage.ingest.RecordV1Builder;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import dev.weir.storage.wire.WireSeries;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The distributors' common step: validate each series of a request (the same rules and reasons
 * as the ingester), normalize its labels to sorted order, and group the valid series by the
 * destination of their token ({@link SeriesHash} of tenant and labels). Refused series and samples
 * are counted in {@code weir_discarded_samples_total}; the caller reports the first refusal after
 * writing the valid part.
 *
 * <p>Stateless apart from its dependencies; thread-safe.
 */
final class SeriesRouter {
  private static final ThreadLocal<WireSeries> CURSOR = ThreadLocal.withInitial(() -> new WireSeries(false));
  private final IngesterMetrics metrics;
  private final RateLimitedLog log;
  private final LongSupplier clock;

  SeriesRouter(IngesterMetrics metrics, RateLimitedLog log, LongSupplier clock) {
    this.metrics = metrics;
    this.log = log;
    this.clock = clock;
  }

  /** The valid part of {@code request}, grouped by {@code destination.apply(token)}. */
  <K> Map<K, WriteRequest.Builder> route(String tenant, WriteRequest request, Limits limits,
      Function<Integer, K> destination, PushErrors errors) {
    Map<K, WriteRequest.Builder> out = new HashMap<>();
    long maxTime = clock.getAsLong() + limits.creationGracePeriod().toMillis();
    int received = 0;
    for (TimeSeries ts : request.getTimeseriesList()) {
      received += ts.getSamplesCount() + ts.getHistogramsCount();
      Clean c = clean(ts, limits, maxTime, errors);
      if (c != null) {
        K dest = destination.apply(SeriesHash.of(tenant, c.labels().pairsUnsafe()));
        out.computeIfAbsent(dest, k -> WriteRequest.newBuilder()).addTimeseries(c.series());
      }
    }
    metrics.distributorReceived(tenant, received);
    if (request.getMetadataCount() > 0) {
      if (out.isEmpty()) {
        out.put(metadataDestination(tenant, request.getMetadata(0), destination), WriteRequest.newBuilder());
      }
      out.values().iterator().next().addAllMetadata(request.getMetadataList());
    }
    return out;
  }

  /**
   * {@link #route} for a remote write 1.0 request still in its bytes, into version-1 record parts:
   * a series whose labels are ASCII, sorted, unique and within every rule and limit, that carries
   * only float samples none of which is too far in the future, is routed and copied as its bytes
   * (its token computed on them; no String or protobuf object is built). Any other series takes
   * {@link #route}'s path (parsed, checked, normalized, re-encoded), so both give the same
   * records, errors and counts.
   *
   * @throws ClientErrorException {@code bad_data} when the request is not well-formed (nothing is
   *     routed then)
   */
  <K> Map<K, RecordV1Builder> routeWire(String tenant, WireBatch batch, Limits limits, Function<Integer, K> destination,
      PushErrors errors) {
    Map<K, RecordV1Builder> out = new HashMap<>();
    long maxTime = clock.getAsLong() + limits.creationGracePeriod().toMillis();
    int tenantHash = SeriesHash.begin(tenant);
    WireSeries ws = CURSOR.get();
    int received = 0;
    for (int k = 0; k < batch.size(); k++) {
      try {
        batch.read(k, ws);
      } catch (WireFormatException e) {
        throw badData(k, e.getMessage());
      }
      received += ws.samples() + ws.histograms();
      if (asSent(ws, limits, maxTime)) {
        int h = tenantHash;
        byte[] b = ws.buffer();
        for (int i = 0; i < ws.labelCount(); i++) {
          h = SeriesHash.add(h, b, ws.nameOffset(i), ws.nameLength(i));
          h = SeriesHash.add(h, b, ws.valueOffset(i), ws.valueLength(i));
        }
        out.computeIfAbsent(destination.apply(SeriesHash.finish(h)), d -> new RecordV1Builder())
            .addSeries(b, ws.seriesOffset(), ws.seriesLength());
        continue;
      }
      TimeSeries ts;
      try {
        ts = TimeSeries.parseFrom(ByteBuffer.wrap(ws.buffer(), ws.seriesOffset(), ws.seriesLength()));
      } catch (InvalidProtocolBufferException e) {
        throw badData(k, e.getMessage());
      }
      Clean c = clean(ts, limits, maxTime, errors);
      if (c != null) {
        K dest = destination.apply(SeriesHash.of(tenant, c.labels().pairsUnsafe()));
        out.computeIfAbsent(dest, d -> new RecordV1Builder()).addSeries(c.series());
      }
    }
    metrics.distributorReceived(tenant, received);
    List<MetricMetadata> metadata = batch.metadata();
    if (!metadata.isEmpty()) {
      if (out.isEmpty()) {
        out.put(metadataDestination(tenant, metadata.get(0), destination), new RecordV1Builder());
      }
      out.values().iterator().next().addMetadata(metadata);
    }
    return out;
  }

  private static ClientErrorException badData(int series, String problem) {
    return new ClientErrorException("bad_data", "the request is not a valid remote write request"
        + " (prometheus.WriteRequest): series " + series + ": " + problem);
  }

  /** Whether a series may be produced exactly as sent: {@link #clean} would keep it unchanged. */
  private static boolean asSent(WireSeries ws, Limits limits, long maxTime) {
    if (ws.isV2() || !ws.hasKey() || ws.histograms() > 0 || ws.exemplars() > 0 || ws.samples() == 0
        || ws.hasEmptyValue() || ws.labelCount() > limits.maxLabelNamesPerSeries()
        || ws.maxNameLength() > limits.maxLabelNameLength() || ws.maxValueLength() > limits.maxLabelValueLength()
        || !ws.hasLegacyValidNames()) {
      return false;
    }
    for (int i = 0; i < ws.samples(); i++) {
      if (ws.timestamp(i) > maxTime) {
        return false;
      }
    }
    return true;
  }

  /**
   * Metadata travels with one destination: any holds it for the tenant. A metadata-only request
   * goes where its first metric family's series would.
   */
  private static <K> K metadataDestination(String tenant, MetricMetadata first, Function<Integer, K> destination) {
    return destination.apply(SeriesHash.of(tenant, new String[] {Labels.METRIC_NAME, first.getMetricFamilyName()}));
  }

  /** A valid series as it is produced, and its sorted labels. */
  private record Clean(TimeSeries series, Labels labels) {}

  /**
   * The valid part of one series with sorted labels, or null when nothing of it is left; refusals
   * go to {@code errors}.
   */
  private @Nullable Clean clean(TimeSeries ts, Limits limits, long maxTime, PushErrors errors) {
    Labels labels;
    try {
      labels = Validator.labels(ts, limits);
    } catch (ClientErrorException e) {
      errors.addSeries(e.reason(), ts.getSamplesCount(), ts.getHistogramsCount(), e.getMessage());
      return null;
    }
    TimeSeries.Builder clean = TimeSeries.newBuilder();
    for (int i = 0; i < labels.size(); i++) {
      clean.addLabels(Label.newBuilder().setName(labels.name(i)).setValue(labels.value(i)));
    }
    for (Sample s : ts.getSamplesList()) {
      if (s.getTimestamp() > maxTime) {
        errors.add("sample_too_far_in_future", 1, "received a sample whose timestamp is too far in the future,"
            + " timestamp: " + s.getTimestamp() + ", series: '" + labels + "'");
      } else {
        clean.addSamples(s);
      }
    }
    for (Histogram h : ts.getHistogramsList()) {
      HistogramProtos.Decoded d = HistogramProtos.fromProto(h);
      NativeHistogram ok = HistogramAdmission.admit(d.histogram(), d.problem(), h.getTimestamp(), maxTime, limits,
          labels.toString(), errors);
      if (ok != null) {
        // The message as sent unless admission changed it (a schema above 8 or too many buckets
        // lowered the resolution).
        clean.addHistograms(ok == d.histogram() && ok.schema() == h.getSchema() ? h
            : HistogramProtos.toProto(ok, h.getTimestamp()));
      }
    }
    if (ts.getExemplarsCount() > 0 && limits.maxGlobalExemplarsPerUser() > 0) {
      // Validated here too, so a Kafka-mode client hears about a refused exemplar; the
      // ingester checks its age and order against its head.
      for (dev.weir.proto.prompb.Exemplar e : ts.getExemplarsList()) {
        try {
          dev.weir.ingester.push.ExemplarValidator.check(dev.weir.ingester.push.ExemplarValidator.of(e), labels,
              Long.MIN_VALUE, maxTime);
          clean.addExemplars(e);
        } catch (ClientErrorException ex) {
          errors.exemplars(ex.reason(), 1, ex.getMessage());
        }
      }
    }
    if (clean.getSamplesCount() == 0 && clean.getHistogramsCount() == 0 && clean.getExemplarsCount() == 0) {
      return null;
    }
    return new Clean(clean.build(), labels);
  }
}
