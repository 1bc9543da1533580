package dev.weir.ingester.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP server's connection bounds over real loopback sockets: idle connections and requests
 * trickled in (slowloris) are closed after their timeout, and connections beyond the limit are
 * closed when accepted while the open ones keep working. Timeouts are small here; the waits have
 * generous upper bounds and assert no speed.
 */
class HttpServerLimitsIT {
  static final Duration SHORT = Duration.ofMillis(500);
  static final Duration LONG = Duration.ofMinutes(5);

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final List<Socket> sockets = new ArrayList<>();
  private final ScheduledExecutorService trickler = Executors.newSingleThreadScheduledExecutor();
  private HttpServer server;

  private void start(Duration read, Duration idle, int connLimit) throws Exception {
    ServerConfig config = new ServerConfig("127.0.0.1", 0, "127.0.0.1", 0, Duration.ofSeconds(5), 1 << 20, 1 << 20,
        read, idle, connLimit, 0, 100);
    config.validate();
    HttpRouter router = new HttpRouter();
    router.add("ok", Set.of("GET", "POST"), "/ok", ex -> ex.respondText(200, "ok"));
    server = new HttpServer(config, router, new RequestMetrics(registry));
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    trickler.shutdownNow();
    for (Socket s : sockets) {
      s.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", server.port());
    s.setSoTimeout(30_000);
    sockets.add(s);
    return s;
  }

  /** Sends a keep-alive GET /ok and reads the whole response; returns the body. */
  static String get(Socket s) throws IOException {
    s.getOutputStream().write("GET /ok HTTP/1.1\r\nHost: weir\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed before the response ended: " + head);
      }
      head.write(b);
    }
    String headers = head.toString(StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT);
    assertThat(headers).startsWith("http/1.1 200");
    int at = headers.indexOf("content-length:") + "content-length:".length();
    int length = Integer.parseInt(headers.substring(at, headers.indexOf("\r\n", at)).trim());
    return new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  /** True once the server closed the connection (end of stream or reset). */
  static boolean closedByServer(Socket s) {
    try {
      return s.getInputStream().read() < 0;
    } catch (SocketException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private double scrape(String line) {
    for (String l : registry.scrape().split("\n")) {
      if (l.startsWith(line + " ")) {
        return Double.parseDouble(l.substring(line.length() + 1));
      }
    }
    return 0;
  }

  @Test
  void idleConnectionsAreClosedAfterTheIdleTimeoutBeforeAndBetweenRequests() throws Exception {
    start(LONG, SHORT, 0);
    Socket silent = connect();
    Socket keepAlive = connect();
    assertThat(get(keepAlive)).isEqualTo("ok");
    await().atMost(Duration.ofSeconds(30)).until(() -> closedByServer(silent));
    await().atMost(Duration.ofSeconds(30)).until(() -> closedByServer(keepAlive));
    assertThat(scrape("weir_http_connections_timed_out_total{timeout=\"idle\"}")).isEqualTo(2);
  }

  @Test
  void requestsTrickledInAreClosedAfterTheReadTimeout() throws Exception {
    // The idle timeout is long, so only the read timeout can close these.
    start(SHORT, LONG, 0);
    Socket slowHeaders = connect();
    Socket slowBody = connect();
    slowHeaders.getOutputStream().write("GET /ok HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
    slowBody.getOutputStream().write("POST /ok HTTP/1.1\r\nHost: weir\r\nContent-Length: 1000\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    // A byte every 100 ms on each: never idle, never finished.
    trickler.scheduleAtFixedRate(() -> {
      try {
        slowHeaders.getOutputStream().write('X');
        slowBody.getOutputStream().write('x');
      } catch (IOException e) {
        // closed by the server: what the test waits for
      }
    }, 0, 100, TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(30)).until(() -> closedByServer(slowHeaders));
    await().atMost(Duration.ofSeconds(30)).until(() -> closedByServer(slowBody));
    assertThat(scrape("weir_http_connections_timed_out_total{timeout=\"read\"}")).isEqualTo(2);
    assertThat(get(connect())).isEqualTo("ok");
  }

  @Test
  void connectionsBeyondTheLimitAreClosedAndOpenOnesKeepWorking() throws Exception {
    start(LONG, LONG, 3);
    List<Socket> open = List.of(connect(), connect(), connect());
    for (Socket s : open) {
      assertThat(get(s)).isEqualTo("ok");
    }
    Socket extra = connect();
    await().atMost(Duration.ofSeconds(30)).until(() -> closedByServer(extra));
    for (Socket s : open) {
      assertThat(get(s)).isEqualTo("ok");
    }
    assertThat(scrape("weir_server_connections_refused_total{server=\"http\"}")).isEqualTo(1);
    // A slot freed is usable again.
    open.get(0).close();
    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> get(connect()).equals("ok"));
  }
}
