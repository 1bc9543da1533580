package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.push.ExemplarsWritten;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.UserLagRequest;
import dev.weir.proto.ingester.UserLagResponse;
import dev.weir.proto.ingester.MetricsMetadataRequest;
import dev.weir.proto.ingester.MetricsMetadataResponse;
import dev.weir.proto.ingester.WriteResponse;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC {@code weir.Ingester} service over an {@link Ingester}. The tenant comes from the
 * call context (see {@link GrpcInterceptors#tenant}). Errors map through {@link GrpcStatuses}; Push
 * applies the per-request series and sample limits of remote write ({@link ApiLimits}), answering
 * INVALID_ARGUMENT over them.
 *
 * <p>Thread-safe.
 */
public final class IngesterGrpcService extends QueryingIngesterService {
  private final PushHandler push;
  private final @Nullable Ingester ingester;
  private final ReadConsistency consistency;
  private final ApiLimits limits;
  private final String instanceId;

  /**
   * @param push what Push does (the ingester, a distributor, or a refusal)
   * @param ingester serves the query methods; null in a distributor-only process
   * @param limits the per-request series and sample limits Push applies, as remote write does
   * @param instanceId this instance's ID, named in UserLag answers
   */
  public IngesterGrpcService(PushHandler push, @Nullable Ingester ingester, ReadConsistency consistency,
      ApiLimits limits, String instanceId) {
    this.instanceId = instanceId;
    this.push = push;
    this.ingester = ingester;
    this.consistency = consistency;
    this.limits = limits;
  }

  @Override
  protected ReadSource.Reader reader(String tenant, ReadLevel level) {
    Ingester i = ingester;
    if (i == null) {
      throw Status.UNIMPLEMENTED.withDescription("this process runs no ingester (--target=distributor):"
          + " query an ingester").asRuntimeException();
    }
    return ReadSource.of(i, consistency).reader(tenant, level);
  }

  @Override
  public void userLag(UserLagRequest request, StreamObserver<UserLagResponse> out) {
    try {
      Ingester i = ingester;
      if (i == null) {
        throw Status.UNIMPLEMENTED.withDescription("this process runs no ingester (--target=distributor)")
            .asRuntimeException();
      }
      out.onNext(UserLag.local(i, consistency, instanceId, GrpcInterceptors.TENANT.get()));
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  /** The local ingester, or null after answering UNIMPLEMENTED (a distributor-only process). */
  private @org.jspecify.annotations.Nullable Ingester ingesterOrRefuse(StreamObserver<?> out) {
    Ingester i = ingester;
    if (i == null) {
      out.onError(Status.UNIMPLEMENTED.withDescription("this process runs no ingester (--target=distributor):"
          + " query an ingester").asRuntimeException());
    }
    return i;
  }

  @Override
  public void metricsMetadata(MetricsMetadataRequest request, StreamObserver<MetricsMetadataResponse> out) {
    Ingester i = ingesterOrRefuse(out);
    if (i == null) {
      return;
    }
    try {
      out.onNext(MetricsMetadataResponse.newBuilder().addAllMetadata(i.metadata(GrpcInterceptors.TENANT.get())
          .values()).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void queryExemplars(dev.weir.proto.ingester.ExemplarQueryRequest request,
      StreamObserver<dev.weir.proto.ingester.ExemplarQueryResponse> out) {
    Ingester i = ingesterOrRefuse(out);
    if (i == null) {
      return;
    }
    try {
      String tenant = GrpcInterceptors.TENANT.get();
      java.util.List<java.util.List<dev.weir.storage.tsdb.head.SeriesExemplars>> answers = new java.util.ArrayList<>();
      for (dev.weir.proto.ingester.LabelMatchers m : request.getMatchersList()) {
        answers.add(i.exemplars(tenant, request.getStartTimestampMs(), request.getEndTimestampMs(),
            Matchers.fromProto(m.getMatchersList())));
      }
      out.onNext(ExemplarProtos.toResponse(ExemplarsApi.merge(answers)));
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void push(WriteRequest request, StreamObserver<WriteResponse> out) {
    ExemplarsWritten.Tally written = new ExemplarsWritten.Tally();
    try {
      long samples = 0;
      for (TimeSeries ts : request.getTimeseriesList()) {
        samples += ts.getSamplesCount() + ts.getHistogramsCount();
      }
      limits.checkWriteRequest(request.getTimeseriesCount(), samples);
      Map<Integer, Long> produced = new java.util.HashMap<>();
      written.during(() -> produced.putAll(ProducedOffsets.capture(
          () -> push.push(GrpcInterceptors.TENANT.get(), request))));
      Metadata headers = GrpcInterceptors.RESPONSE_HEADERS.get();
      if (!produced.isEmpty() && headers != null) {
        headers.put(GrpcInterceptors.PRODUCED_OFFSETS, ReadLevel.formatOffsets(produced));
      }
      out.onNext(WriteResponse.newBuilder().setExemplarsWritten(written.count()).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e, written.count()));
    }
  }
}
