package dev.weir.ingester.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.api.ApiLimits;
import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.WriteResponse;
import dev.weir.proto.prompb.WriteRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gRPC server's bounds over real loopback connections: calls beyond the handler pool and its
 * queue get RESOURCE_EXHAUSTED at once instead of queueing without bound, and connections beyond
 * the limit are closed while the open ones keep working.
 */
class GrpcServerLimitsIT {
  static final int THREADS = 2;
  static final int QUEUED = 3;

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger entered = new AtomicInteger();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private GrpcServer server;

  private void start(int connLimit) throws Exception {
    ServerConfig config = new ServerConfig("127.0.0.1", 0, "127.0.0.1", 0, Duration.ofSeconds(1), 1 << 20, 1 << 20,
        Duration.ofSeconds(30), Duration.ofSeconds(30), 0, connLimit, 100);
    config.validate();
    IngesterGrpcService service = new IngesterGrpcService((tenant, req) -> {
      if (req.getTimeseriesCount() == 0) {
        return; // a quick call
      }
      entered.incrementAndGet();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, null, ReadConsistency.IMMEDIATE, ApiLimits.DEFAULT, "ingester-0");
    RequestMetrics metrics = new RequestMetrics(registry);
    server = new GrpcServer(config, List.of(service),
        List.of(GrpcInterceptors.tenant(new Tenants(true, "anonymous")), GrpcInterceptors.metrics(metrics)), metrics,
        THREADS, QUEUED);
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (ManagedChannel c : channels) {
      c.shutdownNow();
    }
    if (server != null) {
      server.stop();
    }
  }

  private ManagedChannel channel() {
    ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    channels.add(c);
    return c;
  }

  private static IngesterGrpc.IngesterFutureStub stub(ManagedChannel c) {
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, "t");
    return IngesterGrpc.newFutureStub(c).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static WriteRequest slow() {
    return WriteRequest.newBuilder().addTimeseries(dev.weir.proto.prompb.TimeSeries.getDefaultInstance()).build();
  }

  private static Status.Code code(Future<WriteResponse> f) throws InterruptedException {
    try {
      f.get(30, TimeUnit.SECONDS);
      return Status.Code.OK;
    } catch (ExecutionException e) {
      return Status.fromThrowable(e.getCause()).getCode();
    } catch (java.util.concurrent.TimeoutException e) {
      return Status.Code.DEADLINE_EXCEEDED;
    }
  }

  @Test
  void callsBeyondThePoolAndItsQueueGetResourceExhaustedNotQueued() throws Exception {
    start(0);
    ManagedChannel c = channel();
    List<Future<WriteResponse>> held = new ArrayList<>();
    for (int i = 0; i < THREADS + QUEUED; i++) {
      held.add(stub(c).push(slow()));
    }
    // Both threads are busy and three calls wait: the pool and its queue are full.
    await().atMost(Duration.ofSeconds(30)).until(() -> entered.get() == THREADS);
    List<Future<WriteResponse>> flood = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      flood.add(stub(c).push(WriteRequest.getDefaultInstance()));
    }
    for (Future<WriteResponse> f : flood) {
      assertThat(code(f)).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }
    assertThatThrownBy(() -> stub(c).push(WriteRequest.getDefaultInstance()).get(30, TimeUnit.SECONDS))
        .hasMessageContaining("too many gRPC calls in flight");
    assertThat(held).noneMatch(Future::isDone);

    release.countDown();
    for (Future<WriteResponse> f : held) {
      assertThat(code(f)).isEqualTo(Status.Code.OK);
    }
    // The permits came back: calls are admitted again.
    await().atMost(Duration.ofSeconds(30))
        .until(() -> code(stub(c).push(WriteRequest.getDefaultInstance())) == Status.Code.OK);
    String exhausted = "weir_request_duration_seconds_count{method=\"gRPC\",route=\"/weir.Ingester/Push\","
        + "status_code=\"RESOURCE_EXHAUSTED\"}";
    assertThat(registry.scrape()).contains(exhausted + " 21");
  }

  @Test
  void connectionsBeyondTheLimitAreClosedAndOpenOnesKeepWorking() throws Exception {
    start(2);
    ManagedChannel first = channel();
    ManagedChannel second = channel();
    assertThat(code(stub(first).push(WriteRequest.getDefaultInstance()))).isEqualTo(Status.Code.OK);
    assertThat(code(stub(second).push(WriteRequest.getDefaultInstance()))).isEqualTo(Status.Code.OK);
    ManagedChannel third = channel();
    assertThat(code(stub(third).push(WriteRequest.getDefaultInstance()))).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(code(stub(first).push(WriteRequest.getDefaultInstance()))).isEqualTo(Status.Code.OK);
    assertThat(code(stub(second).push(WriteRequest.getDefaultInstance()))).isEqualTo(Status.Code.OK);
    assertThat(registry.scrape()).contains("weir_server_connections_refused_total{server=\"grpc\"}");
    first.shutdownNow();
    await().atMost(Duration.ofSeconds(30))
        .until(() -> code(stub(channel()).push(WriteRequest.getDefaultInstance())) == Status.Code.OK);
  }
}
