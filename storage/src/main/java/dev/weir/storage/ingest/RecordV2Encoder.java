package dev.weir.storage.ingest;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.writev2.Exemplar;
import dev.weir.proto.writev2.Histogram;
import dev.weir.proto.writev2.Metadata;
import dev.weir.proto.writev2.Request;
import dev.weir.proto.writev2.Sample;
import dev.weir.storage.errors.ClientErrorException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Encodes a write request as records of format v2: {@code io.prometheus.write.v2.Request} bodies,
 * each with its own symbols table (so a record decodes alone), split between series so none
 * exceeds the size limit. Metadata, which 2.0 carries per series, goes with the first series of
 * its metric in the same record, or with a series of only the metric name (no samples) when the
 * request has no series of that name. Not thread-safe: one per {@link #encode} call.
 */
final class RecordV2Encoder {
  private static final String METRIC_NAME = "__name__";

  private final int maxBytes;
  private final Map<String, MetricMetadata> pendingMetadata = new LinkedHashMap<>();
  private final List<byte[]> out = new ArrayList<>();
  private Request.Builder cur = Request.newBuilder();
  private Map<String, Integer> symbols = new HashMap<>();
  private int size;

  private RecordV2Encoder(int maxBytes) {
    this.maxBytes = maxBytes;
    reset();
  }

  /**
   * The request as v2 record values.
   *
   * @throws ClientErrorException when one series alone is larger than {@code maxBytes}
   */
  static List<byte[]> encode(WriteRequest request, int maxBytes) {
    RecordV2Encoder e = new RecordV2Encoder(maxBytes);
    for (MetricMetadata m : request.getMetadataList()) {
      if (!m.getMetricFamilyName().isEmpty()) { // readers drop nameless metadata anyway
        e.pendingMetadata.putIfAbsent(m.getMetricFamilyName(), m);
      }
    }
    for (TimeSeries ts : request.getTimeseriesList()) {
      e.add(ts);
    }
    for (MetricMetadata m : List.copyOf(e.pendingMetadata.values())) {
      e.add(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName(METRIC_NAME)
          .setValue(m.getMetricFamilyName())).build());
    }
    e.flush();
    return e.out;
  }

  private void reset() {
    cur = Request.newBuilder();
    symbols = new HashMap<>();
    size = 0;
    ref(""); // the specification's first symbol
  }

  private void flush() {
    if (cur.getTimeseriesCount() > 0) {
      out.add(cur.build().toByteArray());
    }
    reset();
  }

  private void add(TimeSeries ts) {
    String name = null;
    for (Label l : ts.getLabelsList()) {
      if (l.getName().equals(METRIC_NAME)) {
        name = l.getValue();
        break;
      }
    }
    MetricMetadata m = name == null ? null : pendingMetadata.get(name);
    int before = cur.getSymbolsCount();
    int symbolsSize = size;
    dev.weir.proto.writev2.TimeSeries v2 = convert(ts, m);
    int seriesSize = CodedOutputStream.computeMessageSize(5, v2);
    if (size + seriesSize > maxBytes && cur.getTimeseriesCount() > 0) {
      // Start the next record: drop the symbols this series added here and convert it again.
      List<String> keep = new ArrayList<>(cur.getSymbolsList().subList(0, before));
      for (String s : cur.getSymbolsList().subList(before, cur.getSymbolsCount())) {
        symbols.remove(s);
      }
      cur.clearSymbols().addAllSymbols(keep);
      size = symbolsSize;
      flush();
      v2 = convert(ts, m);
      seriesSize = CodedOutputStream.computeMessageSize(5, v2);
    }
    if (size + seriesSize > maxBytes) {
      throw new ClientErrorException("series_too_large", "a single series is " + (size + seriesSize) + " bytes with"
          + " its symbols, more than the record size limit " + maxBytes
          + " (--ingest-storage.kafka.producer-max-record-size-bytes)");
    }
    cur.addTimeseries(v2);
    size += seriesSize;
    if (m != null) {
      pendingMetadata.remove(name);
    }
  }

  private dev.weir.proto.writev2.TimeSeries convert(TimeSeries ts, @Nullable MetricMetadata m) {
    dev.weir.proto.writev2.TimeSeries.Builder b = dev.weir.proto.writev2.TimeSeries.newBuilder();
    for (Label l : ts.getLabelsList()) {
      b.addLabelsRefs(ref(l.getName())).addLabelsRefs(ref(l.getValue()));
    }
    for (dev.weir.proto.prompb.Sample s : ts.getSamplesList()) {
      b.addSamples(Sample.newBuilder().setValue(s.getValue()).setTimestamp(s.getTimestamp()));
    }
    for (dev.weir.proto.prompb.Histogram h : ts.getHistogramsList()) {
      try {
        // The 1.0 and 2.0 Histogram messages share every field number.
        b.addHistograms(Histogram.parseFrom(h.toByteString()));
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException("a 1.0 histogram does not parse as 2.0", e);
      }
    }
    for (dev.weir.proto.prompb.Exemplar ex : ts.getExemplarsList()) {
      Exemplar.Builder e = Exemplar.newBuilder().setValue(ex.getValue()).setTimestamp(ex.getTimestamp());
      for (Label l : ex.getLabelsList()) {
        e.addLabelsRefs(ref(l.getName())).addLabelsRefs(ref(l.getValue()));
      }
      b.addExemplars(e);
    }
    if (m != null) {
      // The 1.0 MetricType numbers are the 2.0 ones (UNKNOWN = UNSPECIFIED = 0).
      b.setMetadata(Metadata.newBuilder().setTypeValue(m.getTypeValue()).setHelpRef(ref(m.getHelp()))
          .setUnitRef(ref(m.getUnit())));
    }
    return b.build();
  }

  private int ref(String s) {
    Integer r = symbols.get(s);
    if (r != null) {
      return r;
    }
    int n = cur.getSymbolsCount();
    cur.addSymbols(s);
    symbols.put(s, n);
    size += CodedOutputStream.computeStringSize(4, s);
    return n;
  }
}
