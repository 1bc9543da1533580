package dev.weir.ingester.server;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 server (Netty). Bodies are aggregated up to the configured limit (Netty answers
 * 413 above it, before reading the rest); handlers then run on a bounded pool of named threads,
 * never on the event loop, so they may block. Errors a handler throws are mapped by class:
 * {@link ClientErrorException} to its 4xx with the message, {@link ServerErrorException} to 503,
 * anything else to 500. Connections are bounded ({@code server.http-conn-limit}: one accepted
 * beyond it is closed at once) and timed ({@link HttpConnectionTimeouts}: idle between requests,
 * and a request must arrive whole within the read timeout).
 *
 * <p>Thread-safe for {@link #port()}; start and stop come from the service manager.
 */
public final class HttpServer implements Service {
  private static final Logger log = LoggerFactory.getLogger(HttpServer.class);
  /** Requests waiting for a handler thread beyond which the server answers 503. */
  private static final int MAX_QUEUED_REQUESTS = 10_000;

  private final ServerConfig config;
  private final HttpRouter router;
  private final RequestMetrics metrics;
  private @Nullable EventLoopGroup boss;
  private @Nullable EventLoopGroup workers;
  private @Nullable ExecutorService handlers;
  private @Nullable Channel channel;

  public HttpServer(ServerConfig config, HttpRouter router, RequestMetrics metrics) {
    this.config = config;
    this.router = router;
    this.metrics = metrics;
  }

  @Override
  public String name() {
    return "http-server";
  }

  @Override
  public void start() throws Exception {
    int threads = Math.max(8, Runtime.getRuntime().availableProcessors() * 4);
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(MAX_QUEUED_REQUESTS), NamedThreads.factory("http-handler"));
    pool.allowCoreThreadTimeOut(true);
    handlers = pool;
    EventLoopGroup b = new MultiThreadIoEventLoopGroup(1, NamedThreads.factory("http-accept"),
        NioIoHandler.newFactory());
    EventLoopGroup w = new MultiThreadIoEventLoopGroup(0, NamedThreads.factory("http-io"),
        NioIoHandler.newFactory());
    boss = b;
    workers = w;
    ServerBootstrap sb = new ServerBootstrap()
        .group(b, w)
        .channelFactory(() -> new ConnectionLimitedChannel("http", config.httpConnLimit(),
            () -> metrics.connectionRefused("http")))
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            HttpConnectionTimeouts timeouts = new HttpConnectionTimeouts(config.httpIdleTimeout(),
                config.httpReadTimeout(), metrics::connectionTimedOut);
            ch.pipeline()
                .addLast(timeouts.bytes())
                .addLast(new HttpServerCodec())
                .addLast(timeouts.messages())
                .addLast(new HttpServerExpectContinueHandler())
                .addLast(new BoundedAggregator(config.httpMaxRequestBodyBytes()))
                .addLast(new Dispatcher(pool));
          }
        });
    InetSocketAddress addr = config.httpListenAddress().isEmpty()
        ? new InetSocketAddress(config.httpListenPort())
        : new InetSocketAddress(config.httpListenAddress(), config.httpListenPort());
    Channel ch = sb.bind(addr).sync().channel();
    channel = ch;
    log.info("msg=\"HTTP server listening\" address={}", ch.localAddress());
  }

  /** The bound port (useful with port 0). */
  public int port() {
    Channel ch = channel;
    if (ch == null) {
      throw new IllegalStateException("HTTP server not started");
    }
    return ((InetSocketAddress) ch.localAddress()).getPort();
  }

  @Override
  public void stop() throws InterruptedException {
    Channel ch = channel;
    if (ch != null) {
      ch.close().sync();
    }
    ExecutorService h = handlers;
    if (h != null) {
      h.shutdown();
      if (!h.awaitTermination(config.gracefulShutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        h.shutdownNow();
      }
    }
    if (workers != null) {
      workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
    if (boss != null) {
      boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }
  }

  /**
   * Aggregates request bodies up to the limit; a larger one (by its Content-Length, before any of
   * it is read, or once the bytes received pass the limit) gets 413 with the reason, and the
   * connection is closed so the rest of the body is never read. Counted under the route
   * {@code oversized_body}.
   */
  private final class BoundedAggregator extends HttpObjectAggregator {
    private final int max;

    BoundedAggregator(int max) {
      super(max);
      this.max = max;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, io.netty.handler.codec.http.HttpMessage oversized) {
      byte[] msg = ("request body larger than the limit of " + max + " bytes (--server.http-max-request-body-bytes)\n")
          .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      io.netty.handler.codec.http.FullHttpResponse r = new io.netty.handler.codec.http.DefaultFullHttpResponse(
          io.netty.handler.codec.http.HttpVersion.HTTP_1_1,
          io.netty.handler.codec.http.HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          io.netty.buffer.Unpooled.wrappedBuffer(msg));
      r.headers().set(io.netty.handler.codec.http.HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
          .setInt(io.netty.handler.codec.http.HttpHeaderNames.CONTENT_LENGTH, msg.length)
          .set(io.netty.handler.codec.http.HttpHeaderNames.CONNECTION, "close");
      String method = oversized instanceof io.netty.handler.codec.http.HttpRequest req ? req.method().name() : "?";
      metrics.record(method, "oversized_body", "413", 0);
      ctx.writeAndFlush(r).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
    }
  }

  private final class Dispatcher extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final ExecutorService pool;

    Dispatcher(ExecutorService pool) {
      super(false); // the request is released by the handler thread
      this.pool = pool;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      try {
        pool.execute(() -> serve(ctx, req));
      } catch (RejectedExecutionException e) {
        try {
          QueryStringDecoder uri = new QueryStringDecoder(req.uri());
          new HttpExchange(ctx, req, uri, java.util.List.of())
              .respondText(503, "too many requests in flight\n");
        } finally {
          req.release();
        }
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      log.debug("msg=\"HTTP connection error\" err=\"{}\"", cause.toString());
      ctx.close();
    }
  }

  private void serve(ChannelHandlerContext ctx, FullHttpRequest req) {
    long start = System.nanoTime();
    String route = "other";
    QueryStringDecoder uri = new QueryStringDecoder(req.uri());
    boolean[] known = new boolean[1];
    HttpRouter.Match match = router.match(req.method().name(), uri.path(), known);
    HttpExchange ex = new HttpExchange(ctx, req, uri, match == null ? java.util.List.of() : match.params());
    try {
      if (req.decoderResult().isFailure()) {
        // Netty stops at a header it cannot take (a NUL, a bad name), so the request may be missing
        // headers, e.g. X-Scope-OrgID; it must not be served, and the framing is lost after it.
        route = "malformed_request";
        ex.closeAfterResponse();
        ex.respondText(400, "malformed HTTP request: " + req.decoderResult().cause().getMessage() + "\n");
        return;
      }
      if (match == null) {
        if (known[0]) {
          ex.respondText(405, "method " + req.method() + " not allowed for " + uri.path() + "\n");
        } else {
          ex.respondText(404, "404 page not found: " + uri.path() + "\n");
        }
        return;
      }
      route = match.route().name();
      match.route().handler().handle(ex);
      if (!ex.responded()) {
        throw new IllegalStateException("handler for " + route + " did not respond");
      }
    } catch (ClientErrorException e) {
      respondError(ex, e.httpStatus(), e.getMessage());
    } catch (ServerErrorException e) {
      log.warn("msg=\"request failed, client should retry\" route={} err=\"{}\"", route, e.toString());
      respondError(ex, 503, e.getMessage());
    } catch (Exception | Error e) {
      log.error("msg=\"request failed with an internal error\" route={}", route, e);
      respondError(ex, 500, "internal error: " + e);
    } finally {
      req.release();
      metrics.record(req.method().name(), route, String.valueOf(ex.status()), System.nanoTime() - start);
    }
  }

  private static void respondError(HttpExchange ex, int status, @Nullable String message) {
    if (!ex.responded()) {
      ex.respondText(status, (message == null ? "error" : message) + "\n");
    }
  }
}
