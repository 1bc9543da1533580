package dev.weir.ingester.distributor;

import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.ExemplarsWritten;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PushErrors;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcStatuses;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.WriteResponse;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.storage.errors.ServerErrorException;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * The distributor in classic mode: validates a push and forwards each series over gRPC to the
 * healthy ACTIVE ingester owning its token in the instance ring (replication factor 1). The
 * requests to different ingesters run concurrently; the push succeeds when all did. An ingester's
 * client error is reported after the rest was stored; any other failure is a server error. The
 * exemplars the ingesters say they stored (in their response, or the trailer of a partly refused
 * push) go to the caller's {@link ExemplarsWritten} tally.
 *
 * <p>Thread-safe. Closing shuts the connections to ingesters.
 */
public final class ForwardingDistributor implements PushHandler, AutoCloseable {
  private static final long TIMEOUT_SECONDS = 30;

  private final Function<String, Limits> limits;
  private final Supplier<InstanceRing> ring;
  private final IngesterMetrics metrics;
  private final SeriesRouter router;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final Function<String, ManagedChannel> connect;
  private final RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(ForwardingDistributor.class),
      TimeUnit.SECONDS.toNanos(1), System::nanoTime);

  public ForwardingDistributor(Function<String, Limits> limits, Supplier<InstanceRing> ring, IngesterMetrics metrics,
      LongSupplier clock) {
    this(limits, ring, metrics, clock, a -> NettyChannelBuilder.forTarget(a).usePlaintext()
        .maxInboundMessageSize(100 << 20).build());
  }

  /** With {@code connect} opening the channel to an ingester address (tests: in-process channels). */
  ForwardingDistributor(Function<String, Limits> limits, Supplier<InstanceRing> ring, IngesterMetrics metrics,
      LongSupplier clock, Function<String, ManagedChannel> connect) {
    this.connect = connect;
    this.limits = limits;
    this.ring = ring;
    this.metrics = metrics;
    this.router = new SeriesRouter(metrics, log, clock);
  }

  @Override
  public void push(String tenant, WriteRequest request) {
    InstanceRing r = ring.get();
    PushErrors errors = new PushErrors(tenant, metrics, log);
    Map<String, WriteRequest.Builder> routed = router.route(tenant, request, limits.apply(tenant), token -> {
      InstanceDesc owner = r.ownerOf(token);
      if (owner == null) {
        throw new ServerErrorException("no healthy ACTIVE ingester in the ring to take the write (see /ingester/ring)");
      }
      return owner.getAddr();
    }, errors);
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, tenant);
    List<com.google.common.util.concurrent.ListenableFuture<WriteResponse>> calls = new ArrayList<>();
    List<String> targets = new ArrayList<>();
    for (Map.Entry<String, WriteRequest.Builder> e : routed.entrySet()) {
      IngesterGrpc.IngesterFutureStub stub = IngesterGrpc.newFutureStub(channel(e.getKey()))
          .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
          .withDeadlineAfter(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      calls.add(stub.push(e.getValue().build()));
      targets.add(e.getKey());
    }
    ServerErrorException serverError = null;
    long exemplarsWritten = 0;
    for (int i = 0; i < calls.size(); i++) {
      try {
        exemplarsWritten += calls.get(i).get().getExemplarsWritten();
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new ServerErrorException("interrupted while forwarding to ingesters", ex);
      } catch (ExecutionException ex) {
        Status s = Status.fromThrowable(ex.getCause());
        if (s.getCode() == Status.Code.INVALID_ARGUMENT || s.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
          // The ingester stored the valid part and counted the refusals; its trailer says how many.
          errors.refusedElsewhere("ingester_client_error", Math.max(0, GrpcStatuses.refusedSamples(ex.getCause())),
              String.valueOf(s.getDescription()));
          errors.histogramsRefusedElsewhere(GrpcStatuses.refusedHistograms(ex.getCause()));
          exemplarsWritten += GrpcStatuses.writtenExemplars(ex.getCause());
        } else if (serverError == null) {
          serverError = new ServerErrorException("ingester " + targets.get(i) + " failed the write: " + s.getCode()
              + " " + s.getDescription(), ex.getCause() instanceof StatusRuntimeException sre ? sre : null);
        }
      }
    }
    if (serverError != null) {
      throw serverError;
    }
    ExemplarsWritten.record(exemplarsWritten);
    errors.throwIfAny();
  }

  private ManagedChannel channel(String addr) {
    return channels.computeIfAbsent(addr, connect);
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
  }
}
