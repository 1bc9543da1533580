package dev.weir.ingester.server;

import dev.weir.ingester.lifecycle.Service;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC server (Netty). Handlers run on a fixed pool of named threads with a bounded queue: at
 * most {@code threads + maxQueuedCalls} calls are admitted at once, and a call beyond that gets
 * RESOURCE_EXHAUSTED at once (see {@link GrpcCallAdmission}). Connections are bounded
 * ({@code server.grpc-conn-limit}), and so are calls per connection
 * ({@code server.grpc-max-concurrent-streams}) and message sizes
 * ({@code server.grpc-max-recv-msg-size-bytes}). Stop: refuse new calls, let in-flight ones finish
 * within the graceful timeout, then cancel the rest.
 *
 * <p>Thread-safe for {@link #port()}; start and stop come from the service manager.
 */
public final class GrpcServer implements Service {
  private static final Logger log = LoggerFactory.getLogger(GrpcServer.class);

  /** Calls admitted beyond the running ones, waiting for a thread; more get RESOURCE_EXHAUSTED. */
  static final int MAX_QUEUED_CALLS = 10_000;

  private final ServerConfig config;
  private final List<BindableService> services;
  private final List<ServerInterceptor> interceptors;
  private final RequestMetrics metrics;
  private final int threads;
  private final int maxQueuedCalls;
  private @Nullable Server server;
  private @Nullable ExecutorService executor;
  private @Nullable EventLoopGroup boss;
  private @Nullable EventLoopGroup workers;

  /**
   * @param interceptors applied to every service; the last one runs first
   */
  public GrpcServer(ServerConfig config, List<BindableService> services, List<ServerInterceptor> interceptors,
      RequestMetrics metrics) {
    this(config, services, interceptors, metrics, Math.max(8, Runtime.getRuntime().availableProcessors() * 4),
        MAX_QUEUED_CALLS);
  }

  /** With the handler pool's size and queue given (tests). */
  GrpcServer(ServerConfig config, List<BindableService> services, List<ServerInterceptor> interceptors,
      RequestMetrics metrics, int threads, int maxQueuedCalls) {
    this.config = config;
    this.services = List.copyOf(services);
    this.interceptors = List.copyOf(interceptors);
    this.metrics = metrics;
    this.threads = threads;
    this.maxQueuedCalls = maxQueuedCalls;
  }

  @Override
  public String name() {
    return "grpc-server";
  }

  @Override
  public void start() throws Exception {
    int maxCalls = threads + maxQueuedCalls;
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(maxCalls), NamedThreads.factory("grpc-handler"));
    pool.allowCoreThreadTimeOut(true);
    executor = pool;
    GrpcCallAdmission admission = new GrpcCallAdmission(pool, maxCalls, metrics);
    EventLoopGroup bossGroup = new MultiThreadIoEventLoopGroup(1, NamedThreads.factory("grpc-accept"),
        NioIoHandler.newFactory());
    EventLoopGroup w = new MultiThreadIoEventLoopGroup(0, NamedThreads.factory("grpc-io"),
        NioIoHandler.newFactory());
    boss = bossGroup;
    workers = w;
    InetSocketAddress addr = config.grpcListenAddress().isEmpty()
        ? new InetSocketAddress(config.grpcListenPort())
        : new InetSocketAddress(config.grpcListenAddress(), config.grpcListenPort());
    NettyServerBuilder b = NettyServerBuilder.forAddress(addr)
        .bossEventLoopGroup(bossGroup)
        .workerEventLoopGroup(w)
        .channelFactory(() -> new ConnectionLimitedChannel("grpc", config.grpcConnLimit(),
            () -> metrics.connectionRefused("grpc")))
        // Method lookup runs on the transport thread; each admitted call then moves to the pool.
        .directExecutor()
        .callExecutor(admission)
        .intercept(admission.interceptor())
        .maxConcurrentCallsPerConnection(config.grpcMaxConcurrentStreams())
        .maxInboundMessageSize(config.grpcMaxRecvMsgSizeBytes());
    for (BindableService s : services) {
      b.addService(definition(s, interceptors));
    }
    Server s = b.build().start();
    server = s;
    log.info("msg=\"gRPC server listening\" address={}", s.getListenSockets());
  }

  /**
   * A service as this server serves it: undecodable requests answered INVALID_ARGUMENT (see
   * {@link UndecodableRequests}), inside the interceptors (the last one runs first), which so see
   * and count that answer. Tests serve it in-process through this method.
   */
  public static ServerServiceDefinition definition(BindableService service, List<ServerInterceptor> interceptors) {
    return ServerInterceptors.intercept(UndecodableRequests.guard(service.bindService()), interceptors);
  }

  /** The bound port (useful with port 0). */
  public int port() {
    Server s = server;
    if (s == null) {
      throw new IllegalStateException("gRPC server not started");
    }
    return s.getPort();
  }

  @Override
  public void stop() throws InterruptedException {
    Server s = server;
    if (s != null) {
      s.shutdown();
      if (!s.awaitTermination(config.gracefulShutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn("msg=\"gRPC calls still running after graceful timeout, cancelling\"");
        s.shutdownNow();
        s.awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    ExecutorService e = executor;
    if (e != null) {
      e.shutdownNow();
    }
    if (workers != null) {
      workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
    if (boss != null) {
      boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
  }
}
