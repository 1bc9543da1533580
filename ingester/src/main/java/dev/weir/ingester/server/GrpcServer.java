package dev.weir.ingester.server;

import dev.weir.ingester.lifecycle.Service;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC server (Netty). Handlers run on a fixed pool of named threads, so a burst of pushes
 * queues instead of spawning threads. Stop: refuse new calls, let in-flight ones finish within
 * the graceful timeout, then cancel the rest.
 *
 * <p>Thread-safe for {@link #port()}; start and stop come from the service manager.
 */
public final class GrpcServer implements Service {
  private static final Logger log = LoggerFactory.getLogger(GrpcServer.class);

  private final ServerConfig config;
  private final List<BindableService> services;
  private final List<ServerInterceptor> interceptors;
  private @Nullable Server server;
  private @Nullable ExecutorService executor;

  /**
   * @param interceptors applied to every service; the last one runs first
   */
  public GrpcServer(ServerConfig config, List<BindableService> services, List<ServerInterceptor> interceptors) {
    this.config = config;
    this.services = List.copyOf(services);
    this.interceptors = List.copyOf(interceptors);
  }

  @Override
  public String name() {
    return "grpc-server";
  }

  @Override
  public void start() throws Exception {
    int threads = Math.max(8, Runtime.getRuntime().availableProcessors() * 4);
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), NamedThreads.factory("grpc-handler"));
    pool.allowCoreThreadTimeOut(true);
    executor = pool;
    InetSocketAddress addr = config.grpcListenAddress().isEmpty()
        ? new InetSocketAddress(config.grpcListenPort())
        : new InetSocketAddress(config.grpcListenAddress(), config.grpcListenPort());
    NettyServerBuilder b = NettyServerBuilder.forAddress(addr)
        .executor(pool)
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
  }
}
