package dev.weir.ingester.storegateway;

import dev.weir.ingester.api.QueryingIngesterService;
import dev.weir.ingester.api.ReadSource;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.WriteResponse;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucketstore.BucketStore;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
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
public final class StoreGatewayGrpcService extends QueryingIngesterService {
  private final Supplier<BucketStore> store;

  public StoreGatewayGrpcService(Supplier<BucketStore> store) {
    this.store = store;
  }

  @Override
  public void push(WriteRequest request, StreamObserver<WriteResponse> out) {
    out.onError(Status.UNIMPLEMENTED.withDescription("a store-gateway serves blocks from the bucket and takes no"
        + " writes: push to a distributor").asRuntimeException());
  }

  /** Strong reads need nothing here: blocks in the bucket do not change under a query. */
  @Override
  protected ReadSource.Reader reader(String tenant, ReadLevel level) {
    BucketStore s = store.get();
    return new ReadSource.Reader() {
      @Override
      public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
        return s.select(tenant, mint, maxt, matchers);
      }

      @Override
      public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
        return s.labelNames(tenant, mint, maxt, matchers);
      }

      @Override
      public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
        return s.labelValues(tenant, name, mint, maxt, matchers);
      }
    };
  }
}
