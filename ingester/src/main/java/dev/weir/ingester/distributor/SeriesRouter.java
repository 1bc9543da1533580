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
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

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
      java.util.function.Function<Integer, K> destination, PushErrors errors) {
    Map<K, WriteRequest.Builder> out = new HashMap<>();
    long maxTime = clock.getAsLong() + limits.creationGracePeriod().toMillis();
    int received = 0;
    for (TimeSeries ts : request.getTimeseriesList()) {
      received += ts.getSamplesCount() + ts.getHistogramsCount();
      Labels labels;
      try {
        labels = Validator.labels(ts, limits);
      } catch (ClientErrorException e) {
        errors.addSeries(e.reason(), ts.getSamplesCount(), ts.getHistogramsCount(), e.getMessage());
        continue;
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
        continue;
      }
      K dest = destination.apply(SeriesHash.of(tenant, labels.pairsUnsafe()));
      out.computeIfAbsent(dest, k -> WriteRequest.newBuilder()).addTimeseries(clean);
    }
    metrics.distributorReceived(tenant, received);
    if (request.getMetadataCount() > 0) {
      // Metadata travels with one destination: any holds it for the tenant. A metadata-only
      // request goes where its first metric family's series would.
      if (out.isEmpty()) {
        String family = request.getMetadata(0).getMetricFamilyName();
        out.put(destination.apply(SeriesHash.of(tenant, new String[] {Labels.METRIC_NAME, family})),
            WriteRequest.newBuilder());
      }
      out.values().iterator().next().addAllMetadata(request.getMetadataList());
    }
    return out;
  }
}
