package dev.weir.ingester.api;

import dev.weir.proto.ingester.ExemplarQueryResponse;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.tsdb.head.Exemplar;
import dev.weir.storage.tsdb.head.SeriesExemplars;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.List;

/** Exemplar query answers to and from their gRPC form ({@code ExemplarQueryResponse}). Stateless. */
public final class ExemplarProtos {
  private ExemplarProtos() {}

  public static ExemplarQueryResponse toResponse(List<SeriesExemplars> series) {
    ExemplarQueryResponse.Builder b = ExemplarQueryResponse.newBuilder();
    for (SeriesExemplars s : series) {
      TimeSeries.Builder ts = TimeSeries.newBuilder();
      s.seriesLabels().forEach((n, v) -> ts.addLabels(Label.newBuilder().setName(n).setValue(v)));
      for (Exemplar e : s.exemplars()) {
        dev.weir.proto.prompb.Exemplar.Builder eb = dev.weir.proto.prompb.Exemplar.newBuilder()
            .setValue(e.value()).setTimestamp(e.timestamp());
        e.labels().forEach((n, v) -> eb.addLabels(Label.newBuilder().setName(n).setValue(v)));
        ts.addExemplars(eb);
      }
      b.addTimeseries(ts);
    }
    return b.build();
  }

  public static List<SeriesExemplars> fromResponse(ExemplarQueryResponse r) {
    List<SeriesExemplars> out = new ArrayList<>(r.getTimeseriesCount());
    for (TimeSeries ts : r.getTimeseriesList()) {
      List<Exemplar> ex = new ArrayList<>(ts.getExemplarsCount());
      for (dev.weir.proto.prompb.Exemplar e : ts.getExemplarsList()) {
        ex.add(new Exemplar(labels(e.getLabelsList()), e.getValue(), e.getTimestamp()));
      }
      out.add(new SeriesExemplars(labels(ts.getLabelsList()), ex));
    }
    return out;
  }

  private static Labels labels(List<Label> in) {
    String[] pairs = new String[2 * in.size()];
    for (int i = 0; i < in.size(); i++) {
      pairs[2 * i] = in.get(i).getName();
      pairs[2 * i + 1] = in.get(i).getValue();
    }
    Labels.sortPairs(pairs);
    return Labels.ofSortedPairs(pairs);
  }
}
