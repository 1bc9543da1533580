package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.ingester.WriteResponse;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC {@code weir.Ingester} service over an {@link Ingester}. The tenant comes from the
 * call context (see {@link GrpcInterceptors#tenant}). Errors map through {@link GrpcStatuses}; Push
 * applies the per-request series and sample limits of remote write ({@link ApiLimits}), answering
 * INVALID_ARGUMENT over them.
 *
 * <p>Thread-safe.
 */
public final class IngesterGrpcService extends IngesterGrpc.IngesterImplBase {
  /** Series per QueryStream message, as in Mimir: large enough to amortize, small to stream. */
  static final int SERIES_PER_MESSAGE = 128;

  private final PushHandler push;
  private final @Nullable Ingester ingester;
  private final ReadConsistency consistency;
  private final ApiLimits limits;

  /**
   * @param push what Push does (the ingester, a distributor, or a refusal)
   * @param ingester serves the query methods; null in a distributor-only process
   * @param limits the per-request series and sample limits Push applies, as remote write does
   */
  public IngesterGrpcService(PushHandler push, @Nullable Ingester ingester, ReadConsistency consistency,
      ApiLimits limits) {
    this.push = push;
    this.ingester = ingester;
    this.consistency = consistency;
    this.limits = limits;
  }

  private Ingester queries() {
    Ingester i = ingester;
    if (i == null) {
      throw Status.UNIMPLEMENTED.withDescription("this process runs no ingester (--target=distributor):"
          + " query an ingester").asRuntimeException();
    }
    if (Boolean.TRUE.equals(GrpcInterceptors.STRONG_READ.get())) {
      consistency.awaitStrong();
    }
    return i;
  }

  @Override
  public void push(WriteRequest request, StreamObserver<WriteResponse> out) {
    try {
      long samples = 0;
      for (TimeSeries ts : request.getTimeseriesList()) {
        samples += ts.getSamplesCount() + ts.getHistogramsCount();
      }
      limits.checkWriteRequest(request.getTimeseriesCount(), samples);
      push.push(GrpcInterceptors.TENANT.get(), request);
      out.onNext(WriteResponse.getDefaultInstance());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void queryStream(QueryRequest request, StreamObserver<QueryStreamResponse> out) {
    try {
      long mint = request.getStartTimestampMs();
      long maxt = request.getEndTimestampMs();
      List<SeriesChunks> series = queries().select(GrpcInterceptors.TENANT.get(), mint, maxt,
          Matchers.fromProto(request.getMatchersList()));
      streamSeries(series, mint, maxt, out);
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    try {
      List<String> names = queries().labelNames(GrpcInterceptors.TENANT.get(), request.getStartTimestampMs(),
          request.getEndTimestampMs(), Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelNamesResponse.newBuilder().addAllLabelNames(names).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void labelValues(LabelValuesRequest request, StreamObserver<LabelValuesResponse> out) {
    try {
      List<String> values = queries().labelValues(GrpcInterceptors.TENANT.get(), request.getLabelName(),
          request.getStartTimestampMs(), request.getEndTimestampMs(),
          Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelValuesResponse.newBuilder().addAllLabelValues(values).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  /**
   * Sends the series' samples in {@code [mint, maxt]} in messages of {@link #SERIES_PER_MESSAGE}
   * series (series without samples in the range are left out) and completes the call; stops
   * early, without completing, when the client cancelled. Shared with the store-gateway.
   */
  public static void streamSeries(List<SeriesChunks> series, long mint, long maxt,
      StreamObserver<QueryStreamResponse> out) {
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
