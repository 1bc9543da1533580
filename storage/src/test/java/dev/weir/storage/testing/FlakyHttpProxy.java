package dev.weir.storage.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * An HTTP/1.1 proxy on loopback in front of a real server that answers chosen requests with
 * {@code 503 SlowDown} (what S3 says when it throttles) instead of forwarding them, or holds them
 * unanswered until it is closed (an uploader stuck mid-upload, to be killed there); a held
 * request is never forwarded. One request per connection ({@code Connection: close} both ways), so that
 * each request is judged on its own; {@code Expect: 100-continue} is answered here. Requests with a
 * chunked body are refused (the S3 client sends lengths).
 *
 * <p>Thread-safe.
 */
public final class FlakyHttpProxy implements AutoCloseable {
  private final int upstreamPort;
  private final ServerSocket server;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "flaky-http-proxy");
    t.setDaemon(true);
    return t;
  });
  private final AtomicInteger failuresLeft = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final List<String> forwarded = new ArrayList<>();
  private volatile Predicate<String> failWhen = line -> true;
  private volatile Predicate<String> holdWhen = line -> false;
  private final AtomicInteger held = new AtomicInteger();
  /** Never counted down: held requests wait until {@link #close()} interrupts them. */
  private final CountDownLatch never = new CountDownLatch(1);

  public FlakyHttpProxy(int upstreamPort) throws IOException {
    this.upstreamPort = upstreamPort;
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  /** {@code 127.0.0.1:port}. */
  public String endpoint() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** The next {@code n} requests whose request line matches are answered 503. */
  public void failNext(int n, Predicate<String> requestLine) {
    failWhen = requestLine;
    failuresLeft.set(n);
  }

  /** Requests whose request line matches are held unanswered and never forwarded. */
  public void holdWhen(Predicate<String> requestLine) {
    holdWhen = requestLine;
  }

  /** How many requests are held. */
  public int held() {
    return held.get();
  }

  /** How many requests were answered 503. */
  public int failed() {
    return failed.get();
  }

  /** Request lines forwarded so far, e.g. {@code PUT /bucket/key?partNumber=2&uploadId=... HTTP/1.1}. */
  public synchronized List<String> forwarded() {
    return List.copyOf(forwarded);
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        threads.execute(() -> serve(client));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket client) {
    try (client; InputStream in = client.getInputStream(); OutputStream out = client.getOutputStream()) {
      String head = readHead(in);
      if (head == null) {
        return;
      }
      String line = head.substring(0, head.indexOf("\r\n"));
      String lower = head.toLowerCase(Locale.ROOT);
      if (lower.contains("\r\ntransfer-encoding: chunked")) {
        out.write("HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".getBytes());
        return;
      }
      boolean expectContinue = lower.contains("\r\nexpect: 100-continue");
      long length = contentLength(lower);
      if (failWhen.test(line) && failuresLeft.getAndDecrement() > 0) {
        if (!expectContinue) {
          in.readNBytes((int) length); // read the body, so that closing does not reset the connection
        }
        failed.incrementAndGet();
        byte[] body = "<Error><Code>SlowDown</Code><Message>injected by FlakyHttpProxy</Message></Error>"
            .getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: " + body.length
            + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        return;
      }
      if (expectContinue) {
        out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
      byte[] body = in.readNBytes((int) length);
      if (body.length < length) {
        return; // the client died mid-body: the server must not see a truncated request
      }
      if (holdWhen.test(line)) {
        held.incrementAndGet();
        never.await();
        return;
      }
      synchronized (this) {
        forwarded.add(line);
      }
      forward(rewrite(head, true), body, out);
    } catch (IOException e) {
      // The client went away (e.g. killed); nothing to answer.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void forward(String head, byte[] body, OutputStream toClient) throws IOException {
    try (Socket up = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
        InputStream upIn = up.getInputStream()) {
      OutputStream upOut = up.getOutputStream();
      upOut.write(head.getBytes(StandardCharsets.ISO_8859_1));
      upOut.write(body);
      upOut.flush();
      String responseHead = readHead(upIn);
      if (responseHead == null) {
        return;
      }
      toClient.write(rewrite(responseHead, false).getBytes(StandardCharsets.ISO_8859_1));
      upIn.transferTo(toClient);
    }
  }

  /** The head with {@code Connection: close} (and, for a request, without {@code Expect}). */
  private static String rewrite(String head, boolean request) {
    StringBuilder sb = new StringBuilder();
    for (String h : head.split("\r\n")) {
      String lower = h.toLowerCase(Locale.ROOT);
      if (h.isEmpty() || lower.startsWith("connection:") || lower.startsWith("keep-alive:")
          || (request && lower.startsWith("expect:"))) {
        continue;
      }
      sb.append(h).append("\r\n");
    }
    return sb.append("Connection: close\r\n\r\n").toString();
  }

  private static long contentLength(String lowerHead) {
    for (String h : lowerHead.split("\r\n")) {
      if (h.startsWith("content-length:")) {
        return Long.parseLong(h.substring("content-length:".length()).trim());
      }
    }
    return 0;
  }

  /** Bytes up to and including the blank line, or null at end of stream. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int state = 0;
    int c;
    while ((c = in.read()) >= 0) {
      b.write(c);
      state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3))
          ? state + 1 : (c == '\r' ? 1 : 0);
      if (state == 4) {
        return b.toString(StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    server.close();
    threads.shutdownNow();
  }
}
