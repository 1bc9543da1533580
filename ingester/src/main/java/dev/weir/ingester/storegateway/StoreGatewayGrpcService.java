package dev.weir.ingester.storegateway;

import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.api.Matchers;
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
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucketstore.BucketStore;
import dev.weir.storage.tsdb.head.SeriesChunks;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.Supplier;

/**
 * The {@code weir.Ingester} gRPC service over a bucket's blocks, with the ingester's semantics
 * (tenant from {@code x-scope-orgid}, inclusive millisecond bounds, series in label order with
 * samples in time order; a series in several blocks is one series, identical samples once), so a
 * querier queries store-gateways and ingesters alike. Push is UNIMPLEMENTED. Errors map through
 * {@link GrpcStatuses}: the chunk-bytes limit is RESOURCE_EXHAUSTED, a bucket failure or a block
 * deleted under the query UNAVAILABLE.
 *
 * <p>Thread-safe.
 */
public final class StoreGatewayGrpcService extends IngesterGrpc.IngesterImplBase {
  private final Supplier<BucketStore> store;

  public StoreGatewayGrpcService(Supplier<BucketStore> store) {
    this.store = store;
  }

  @Override
  public void push(WriteRequest request, StreamObserver<WriteResponse> out) {
    out.onError(Status.UNIMPLEMENTED.withDescription("a store-gateway serves blocks from the bucket and takes no"
        + " writes: push to a distributor").asRuntimeException());
  }

  @Override
  public void queryStream(QueryRequest request, StreamObserver<QueryStreamResponse> out) {
    try {
      long mint = request.getStartTimestampMs();
      long maxt = request.getEndTimestampMs();
      List<SeriesChunks> series = store.get().select(GrpcInterceptors.TENANT.get(), mint, maxt,
          Matchers.fromProto(request.getMatchersList()));
      IngesterGrpcService.streamSeries(series, mint, maxt, out);
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }

  @Override
  public void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    try {
      List<String> names = store.get().labelNames(GrpcInterceptors.TENANT.get(), request.getStartTimestampMs(),
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
      List<String> values = store.get().labelValues(GrpcInterceptors.TENANT.get(), request.getLabelName(),
          request.getStartTimestampMs(), request.getEndTimestampMs(), Matchers.fromProto(request.getMatchersList()));
      out.onNext(LabelValuesResponse.newBuilder().addAllLabelValues(values).build());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(GrpcStatuses.toStatus(e));
    }
  }
}
