package dev.weir.ingester.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP request and its response. A handler answers exactly once, either with
 * {@link #respond} (whole body) or with {@link #stream} (chunked body written as it is produced,
 * waiting for the client to take each chunk, so memory stays bounded for large exports).
 *
 * <p>Not thread-safe: used by the one handler thread serving the request. Owns the request
 * buffer, released by the server after the handler returns.
 */
public final class HttpExchange {
  private static final int STREAM_CHUNK_BYTES = 64 * 1024;

  private final ChannelHandlerContext ctx;
  private final FullHttpRequest request;
  private final QueryStringDecoder uri;
  private final List<String> pathParams;
  private @Nullable Map<String, List<String>> params;
  private int status;
  private boolean responded;
  private boolean closeAfterResponse;

  HttpExchange(ChannelHandlerContext ctx, FullHttpRequest request, QueryStringDecoder uri, List<String> pathParams) {
    this.ctx = ctx;
    this.request = request;
    this.uri = uri;
    this.pathParams = pathParams;
  }

  public String method() {
    return request.method().name();
  }

  public String path() {
    return uri.path();
  }

  public @Nullable String header(String name) {
    return request.headers().get(name);
  }

  /** The i-th {@code {param}} of the route pattern, URL-decoded. */
  public String pathParam(int i) {
    return QueryStringDecoder.decodeComponent(pathParams.get(i));
  }

  /** Query parameters, plus form fields of a urlencoded POST body (Prometheus API style). */
  public Map<String, List<String>> params() {
    Map<String, List<String>> p = params;
    if (p == null) {
      p = new LinkedHashMap<>();
      for (Map.Entry<String, List<String>> e : uri.parameters().entrySet()) {
        p.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).addAll(e.getValue());
      }
      String ct = header("Content-Type");
      if ("POST".equals(method()) && ct != null && ct.startsWith("application/x-www-form-urlencoded")) {
        String body = request.content().toString(StandardCharsets.UTF_8);
        QueryStringDecoder form = new QueryStringDecoder(body, StandardCharsets.UTF_8, false);
        for (Map.Entry<String, List<String>> e : form.parameters().entrySet()) {
          p.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).addAll(e.getValue());
        }
      }
      params = p;
    }
    return p;
  }

  public @Nullable String param(String name) {
    List<String> v = params().get(name);
    return v == null || v.isEmpty() ? null : v.get(0);
  }

  public List<String> paramList(String name) {
    return params().getOrDefault(name, List.of());
  }

  /** The request body (valid until the handler returns). */
  public ByteBuf body() {
    return request.content();
  }

  public byte[] bodyBytes() {
    return ByteBufUtil.getBytes(request.content());
  }

  /** The body's length in bytes. */
  public int bodyLength() {
    return request.content().readableBytes();
  }

  /** Copies the body into {@code dst} from index 0 ({@code dst} holds at least {@link #bodyLength()} bytes). */
  public void copyBody(byte[] dst) {
    io.netty.buffer.ByteBuf b = request.content();
    b.getBytes(b.readerIndex(), dst, 0, b.readableBytes());
  }

  /** The status sent, or 0 when nothing was sent yet. */
  public int status() {
    return status;
  }

  public boolean responded() {
    return responded;
  }

  public void respond(int code, String contentType, byte[] body) {
    respond(code, contentType, body, Map.of());
  }

  public void respond(int code, String contentType, byte[] body, Map<String, String> headers) {
    checkNotResponded(code);
    FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.valueOf(code), Unpooled.wrappedBuffer(body));
    resp.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    headers.forEach((k, v) -> resp.headers().set(k, v));
    HttpUtil.setContentLength(resp, body.length);
    finish(resp);
  }

  public void respondText(int code, String text) {
    respond(code, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Starts a chunked response; the returned stream sends a chunk every 64 KiB (blocking until
   * the client took the previous one) and ends the response when closed.
   */
  public OutputStream stream(int code, String contentType) {
    return stream(code, contentType, Map.of());
  }

  /** {@link #stream(int, String)} with more response headers. */
  public OutputStream stream(int code, String contentType, Map<String, String> headers) {
    checkNotResponded(code);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(code));
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    headers.forEach((k, v) -> head.headers().set(k, v));
    HttpUtil.setTransferEncodingChunked(head, true);
    if (!HttpUtil.isKeepAlive(request)) {
      head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    ctx.writeAndFlush(head);
    return new ChunkedStream();
  }

  /** Closes the connection once the response is sent (after a request that broke the framing). */
  void closeAfterResponse() {
    closeAfterResponse = true;
  }

  private void checkNotResponded(int code) {
    if (responded) {
      throw new IllegalStateException("response already sent");
    }
    responded = true;
    status = code;
  }

  private void finish(FullHttpResponse resp) {
    boolean keepAlive = HttpUtil.isKeepAlive(request) && !closeAfterResponse;
    if (!keepAlive) {
      resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    ChannelFuture f = ctx.writeAndFlush(resp);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    }
  }

  private final class ChunkedStream extends OutputStream {
    private ByteBuf buf = Unpooled.buffer(STREAM_CHUNK_BYTES);
    private boolean closed;

    @Override
    public void write(int b) throws IOException {
      buf.writeByte(b);
      maybeFlush();
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      buf.writeBytes(b, off, len);
      maybeFlush();
    }

    private void maybeFlush() throws IOException {
      if (buf.readableBytes() >= STREAM_CHUNK_BYTES) {
        send();
      }
    }

    private void send() throws IOException {
      ByteBuf out = buf;
      buf = Unpooled.buffer(STREAM_CHUNK_BYTES);
      ChannelFuture f = ctx.writeAndFlush(new DefaultHttpContent(out));
      try {
        f.sync();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while streaming the response", e);
      } catch (Exception e) {
        throw new IOException("client went away: " + e.getMessage(), e);
      }
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      if (buf.readableBytes() > 0) {
        send();
      }
      buf.release();
      ChannelFuture f = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
      if (!HttpUtil.isKeepAlive(request)) {
        f.addListener(ChannelFutureListener.CLOSE);
      }
    }
  }
}
