package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.PartitionLag;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/**
 * The query methods of the {@code weir.Ingester} gRPC service (QueryStream, LabelNames,
 * LabelValues) over a {@link ReadSource.Reader}, with one set of semantics for every process that
 * serves them (an ingester, a store-gateway): the tenant from the call context, inclusive
 * millisecond bounds, series in label order streamed in messages of {@link #SERIES_PER_MESSAGE},
 * errors mapped through {@link GrpcStatuses}. Subclasses say where the data comes from and what
 * Push does.
 *
 * <p>Thread-safe when {@link #reader} is.
 */
public abstract class QueryingIngesterService extends IngesterGrpc.IngesterImplBase {
  /** Series per QueryStream message, as in Mimir: large enough to amortize, small to stream. */
  static final int SERIES_PER_MESSAGE = 128;

  /**
   * The reader for one call.
   *
   * @param level what the call's {@code x-read-consistency} and {@code x-read-consistency-offsets} ask
   * @throws RuntimeException mapped through {@link GrpcStatuses}, e.g. when this process has no data
   */
  protected abstract ReadSource.Reader reader(String tenant, ReadLevel level);

  private ReadSource.Reader reader() {
    ReadLevel level = GrpcInterceptors.READ_LEVEL.get();
    return reader(GrpcInterceptors.TENANT.get(), level == null ? ReadLevel.EVENTUAL : level);
  }

  @Override
  public final void queryStream(QueryRequest request, StreamObserver<QueryStreamResponse> out) {
    try {
      long mint = request.getStartTimestampMs();
      long maxt = request.getEndTimestampMs();
      ReadSource.Reader r = reader();
      streamSeries(r.select(mint, maxt, Matchers.fromProto(request.getMatchersList())), mint, maxt,
          toProto(r.freshness()), out);
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public final void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    try {
      ReadSource.Reader r = reader();
      List<String> names = r.labelNames(request.getStartTimestampMs(), request.getEndTimestampMs(),
          Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelNamesResponse.newBuilder().addAllLabelNames(names).addAllFreshness(toProto(r.freshness()))
          .build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public final void labelValues(LabelValuesRequest request, StreamObserver<LabelValuesResponse> out) {
    try {
      ReadSource.Reader r = reader();
      List<String> values = r.labelValues(request.getLabelName(), request.getStartTimestampMs(),
          request.getEndTimestampMs(), Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelValuesResponse.newBuilder().addAllLabelValues(values).addAllFreshness(toProto(r.freshness()))
          .build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  /**
   * Sends the series' samples in {@code [mint, maxt]} in messages of {@link #SERIES_PER_MESSAGE}
   * series (series without samples in the range are left out), the freshness in the last message
   * (a message of its own when there is no series), and completes the call; stops early, without
   * completing, when the client cancelled.
   */
  static void streamSeries(List<SeriesChunks> series, long mint, long maxt, List<PartitionLag> freshness,
      StreamObserver<QueryStreamResponse> out) {
    ServerCallStreamObserver<QueryStreamResponse> call = (ServerCallStreamObserver<QueryStreamResponse>) out;
    QueryStreamResponse.Builder batch = QueryStreamResponse.newBuilder();
    for (SeriesChunks s : series) {
      if (call.isCancelled()) {
        return;
      }
      SeriesChunks.Samples samples = s.samples(mint, maxt);
      SeriesChunks.Histograms hs = s.histograms(mint, maxt);
      if (samples.size() == 0 && hs.size() == 0) {
        continue;
      }
      batch.addTimeseries(toProto(s.labels(), samples, hs));
      if (batch.getTimeseriesCount() >= SERIES_PER_MESSAGE) {
        out.onNext(batch.build());
        batch.clear();
      }
    }
    batch.addAllFreshness(freshness);
    if (batch.getTimeseriesCount() > 0 || batch.getFreshnessCount() > 0) {
      out.onNext(batch.build());
    }
    out.onCompleted();
  }

  /** Freshness as sent to a querier. */
  static List<PartitionLag> toProto(List<PartitionFreshness> freshness) {
    List<PartitionLag> out = new ArrayList<>(freshness.size());
    for (PartitionFreshness f : freshness) {
      out.add(PartitionLag.newBuilder().setPartition(f.partition()).setConsumedOffset(f.consumedOffset())
          .setEndOffset(f.endOffset()).setRecordsBehind(f.recordsBehind()).setConsumedUpToMs(f.consumedUpToMillis())
          .setReady(f.ready()).build());
    }
    return out;
  }

  /** Freshness as a querier receives it. */
  public static PartitionFreshness fromProto(PartitionLag p) {
    return new PartitionFreshness(p.getPartition(), p.getConsumedOffset(), p.getEndOffset(), p.getRecordsBehind(),
        p.getConsumedUpToMs(), p.getReady());
  }

  /** A series with its float samples and its native histogram samples (field 4, as remote read sends them). */
  static TimeSeries toProto(Labels labels, SeriesChunks.Samples samples, SeriesChunks.Histograms hs) {
    TimeSeries ts = toProto(labels, samples);
    if (hs.size() == 0) {
      return ts;
    }
    TimeSeries.Builder b = ts.toBuilder();
    for (int i = 0; i < hs.size(); i++) {
      b.addHistograms(dev.weir.storage.wire.HistogramProtos.toProto(hs.histograms()[i], hs.timestamps()[i]));
    }
    return b.build();
  }

  static TimeSeries toProto(Labels labels, SeriesChunks.Samples samples) {
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    for (int i = 0; i < labels.size(); i++) {
      ts.addLabels(Label.newBuilder().setName(labels.name(i)).setValue(labels.value(i)));
    }
    long[] t = samples.timestamps();
    double[] v = samples.values();
    for (int i = 0; i < t.length; i++) {
      ts.addSamples(Sample.newBuilder().setTimestamp(t[i]).setValue(v[i]));
    }
    return ts.build();
  }
}
