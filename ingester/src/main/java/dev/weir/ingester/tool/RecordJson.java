package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.ingest.RecordFormat;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * One ingest record as a JSON line: offset, timestamp, tenant, record format version ("1" also for
 * a record without the version header; "2" records are decoded from remote write 2.0), and each series'
 * labels (in record order) with its samples as {@code [timestamp, value]} pairs (NaN and
 * infinities as strings); histogram, exemplar and metadata counts when there are any. A record
 * that does not decode (see {@link RecordFormat#decode}) becomes a line with its key, version and
 * an {@code error}. Stateless.
 */
final class RecordJson {
  private RecordJson() {}

  static String line(ConsumerRecord<byte[], byte[]> r) {
    JsonWriter w = new JsonWriter(new StringBuilder(256));
    w.raw("{\"offset\":").number(r.offset()).raw(",\"timestamp\":").number(r.timestamp());
    RecordFormat.Decoded d;
    try {
      d = RecordFormat.decode(r.key(), r.value(), r.headers());
    } catch (ClientErrorException e) {
      w.raw(",\"key\":");
      nullable(w, r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8));
      w.raw(",\"version\":");
      nullable(w, version(r));
      return w.raw(",\"error\":").string(e.reason() + ": " + e.getMessage()).raw('}').toString();
    }
    w.raw(",\"tenant\":").string(d.tenant()).raw(",\"version\":").string(Integer.toString(d.version()));
    w.raw(",\"series\":[");
    for (int i = 0; i < d.request().getTimeseriesCount(); i++) {
      series(w.raw(i == 0 ? "" : ","), d.request().getTimeseries(i));
    }
    w.raw(']');
    if (d.request().getMetadataCount() > 0) {
      w.raw(",\"metadata\":").number(d.request().getMetadataCount());
    }
    return w.raw('}').toString();
  }

  private static void series(JsonWriter w, TimeSeries ts) {
    w.raw("{\"labels\":{");
    for (int i = 0; i < ts.getLabelsCount(); i++) {
      Label l = ts.getLabels(i);
      w.raw(i == 0 ? "" : ",").string(l.getName()).raw(':').string(l.getValue());
    }
    w.raw("},\"samples\":[");
    for (int i = 0; i < ts.getSamplesCount(); i++) {
      Sample s = ts.getSamples(i);
      w.raw(i == 0 ? "[" : ",[").number(s.getTimestamp()).raw(',').value(s.getValue()).raw(']');
    }
    w.raw(']');
    if (ts.getHistogramsCount() > 0) {
      w.raw(",\"histograms\":").number(ts.getHistogramsCount());
    }
    if (ts.getExemplarsCount() > 0) {
      w.raw(",\"exemplars\":").number(ts.getExemplarsCount());
    }
    w.raw('}');
  }

  static @org.jspecify.annotations.Nullable String version(ConsumerRecord<byte[], byte[]> r) {
    Header h = r.headers().lastHeader(RecordFormat.VERSION_HEADER);
    return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static void nullable(JsonWriter w, @org.jspecify.annotations.Nullable String s) {
    if (s == null) {
      w.raw("null");
    } else {
      w.string(s);
    }
  }
}
