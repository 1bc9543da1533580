package dev.weir.ingester.api;

import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
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
   * @param strong the call carries {@code x-read-consistency: strong}
   * @throws RuntimeException mapped through {@link GrpcStatuses}, e.g. when this process has no data
   */
  protected abstract ReadSource.Reader reader(String tenant, boolean strong);

  private ReadSource.Reader reader() {
    return reader(GrpcInterceptors.TENANT.get(), Boolean.TRUE.equals(GrpcInterceptors.STRONG_READ.get()));
  }

  @Override
  public final void queryStream(QueryRequest request, StreamObserver<QueryStreamResponse> out) {
    try {
      long mint = request.getStartTimestampMs();
      long maxt = request.getEndTimestampMs();
      streamSeries(reader().select(mint, maxt, Matchers.fromProto(request.getMatchersList())), mint, maxt, out);
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public final void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    try {
      List<String> names = reader().labelNames(request.getStartTimestampMs(), request.getEndTimestampMs(),
          Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelNamesResponse.newBuilder().addAllLabelNames(names).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public final void labelValues(LabelValuesRequest request, StreamObserver<LabelValuesResponse> out) {
    try {
      List<String> values = reader().labelValues(request.getLabelName(), request.getStartTimestampMs(),
          request.getEndTimestampMs(), Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelValuesResponse.newBuilder().addAllLabelValues(values).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  /**
   * Sends the series' samples in {@code [mint, maxt]} in messages of {@link #SERIES_PER_MESSAGE}
   * series (series without samples in the range are left out) and completes the call; stops
   * early, without completing, when the client cancelled.
   */
  static void streamSeries(List<SeriesChunks> series, long mint, long maxt, StreamObserver<QueryStreamResponse> out) {
    ServerCallStreamObserver<QueryStreamResponse> call = (ServerCallStreamObserver<QueryStreamResponse>) out;
    QueryStreamResponse.Builder batch = QueryStreamResponse.newBuilder();
    for (SeriesChunks s : series) {
      if (call.isCancelled()) {
        return;
      }
      SeriesChunks.Samples samples = s.samples(mint, maxt);
      if (samples.size() == 0) {
        continue;
      }
      batch.addTimeseries(toProto(s.labels(), samples));
      if (batch.getTimeseriesCount() >= SERIES_PER_MESSAGE) {
        out.onNext(batch.build());
        batch.clear();
      }
    }
    if (batch.getTimeseriesCount() > 0) {
      out.onNext(batch.build());
    }
    out.onCompleted();
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
