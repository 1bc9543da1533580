package dev.weir.ingester.server;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes an HTTP connection that is idle too long between requests ({@code idleTimeout}) or that
 * takes too long to send a request, from its first byte to the end of its body
 * ({@code readTimeout}: a client trickling headers or body, slowloris). While a request is being
 * served there is no timer: a long export is not cut off. One instance per connection; its two
 * handlers go into the pipeline, {@link #bytes()} first (it sees the first byte, before the HTTP
 * decoder has a message) and {@link #messages()} right after the HTTP codec (it sees the end of
 * the request and of the response).
 *
 * <p>Not thread-safe: confined to the connection's event loop.
 */
final class HttpConnectionTimeouts {
  private static final Logger log = LoggerFactory.getLogger(HttpConnectionTimeouts.class);

  private enum State { IDLE, READING, SERVING }

  private final long idleNanos;
  private final long readNanos;
  private final Consumer<String> onTimeout;
  private State state = State.IDLE;
  private @Nullable ScheduledFuture<?> timer;

  /**
   * @param onTimeout told "idle" or "read" when it closes a connection (for the metrics)
   */
  HttpConnectionTimeouts(Duration idleTimeout, Duration readTimeout, Consumer<String> onTimeout) {
    this.idleNanos = idleTimeout.toNanos();
    this.readNanos = readTimeout.toNanos();
    this.onTimeout = onTimeout;
  }

  ChannelHandler bytes() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelActive(ChannelHandlerContext ctx) {
        schedule(ctx, idleNanos, "idle");
        ctx.fireChannelActive();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (state == State.IDLE) {
          state = State.READING;
          schedule(ctx, readNanos, "read");
        }
        ctx.fireChannelRead(msg);
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
      }
    };
  }

  ChannelHandler messages() {
    return new ChannelDuplexHandler() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof LastHttpContent && state == State.READING) {
          state = State.SERVING;
          cancel();
        }
        ctx.fireChannelRead(msg);
      }

      @Override
      public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof LastHttpContent) {
          ctx.write(msg, promise).addListener(f -> {
            if (state == State.SERVING && ctx.channel().isActive()) {
              state = State.IDLE;
              schedule(ctx, idleNanos, "idle");
            }
          });
          return;
        }
        ctx.write(msg, promise);
      }
    };
  }

  private void schedule(ChannelHandlerContext ctx, long nanos, String what) {
    cancel();
    timer = ctx.executor().schedule(() -> {
      log.debug("msg=\"closing HTTP connection after {} timeout\" remote={}", what, ctx.channel().remoteAddress());
      onTimeout.accept(what);
      ctx.channel().close();
    }, nanos, TimeUnit.NANOSECONDS);
  }

  private void cancel() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
      timer = null;
    }
  }
}
