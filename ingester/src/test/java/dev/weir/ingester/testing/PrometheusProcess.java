package dev.weir.ingester.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's {@code prometheus} binary (installed by {@code bin/test}) as a child process on a free
 * loopback port, with its own data dir and a config written by the test.
 */
public final class PrometheusProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final Process process;
  private final Path log;
  private final int port;

  private PrometheusProcess(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /** The port a config can name before the process starts (to scrape itself). */
  public static int reservePort() {
    return Ports.free();
  }

  /** Starts Prometheus with {@code config} on {@code port} and waits until it is ready. */
  public static PrometheusProcess start(Path dir, int port, String config, String... extraArgs) throws Exception {
    Path bin = Path.of("/usr/bin/prometheus");
    if (!Files.isExecutable(bin)) {
      throw new IllegalStateException("/usr/bin/prometheus is missing: run bin/test (it installs Debian's prometheus)");
    }
    Files.createDirectories(dir);
    Path cfg = dir.resolve("prometheus.yml");
    Files.writeString(cfg, config);
    Path log = dir.resolve("prometheus.log");
    List<String> cmd = new java.util.ArrayList<>(List.of(bin.toString(), "--config.file=" + cfg,
        "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
        "--web.enable-lifecycle", "--log.level=info"));
    cmd.addAll(List.of(extraArgs));
    Process p = new ProcessBuilder(cmd)
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    PrometheusProcess prom = new PrometheusProcess(p, log, port);
    prom.awaitReady(Duration.ofSeconds(60));
    return prom;
  }

  private void awaitReady(Duration timeout) throws Exception {
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("prometheus exited with " + process.exitValue() + ":\n" + log());
      }
      try {
        if (http.send(HttpRequest.newBuilder(URI.create(url() + "/-/ready")).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("prometheus not ready after " + timeout + ":\n" + log());
  }

  public long pid() {
    return process.pid();
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Rewrites the config file and reloads it ({@code POST /-/reload}). */
  public void reload(Path dir, String config) throws Exception {
    Files.writeString(dir.resolve("prometheus.yml"), config);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/-/reload"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("reload failed: " + r.statusCode() + " " + r.body());
    }
  }

  /** {@code /api/v1/query_range}; the whole response, which must have status success. */
  public JsonNode queryRange(String query, long startMs, long endMs, Duration step) throws Exception {
    String u = url() + "/api/v1/query_range?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8)
        + "&start=" + seconds(startMs) + "&end=" + seconds(endMs) + "&step=" + step.toMillis() / 1000.0;
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(u)).build(),
        HttpResponse.BodyHandlers.ofString());
    JsonNode n = JSON.readTree(r.body());
    if (r.statusCode() != 200 || !"success".equals(n.path("status").asText())) {
      throw new IllegalStateException("query " + query + " failed: " + r.statusCode() + " " + r.body());
    }
    return n;
  }

  private static String seconds(long ms) {
    return ms / 1000 + "." + String.format("%03d", ms % 1000);
  }

  /** The sum of all lines of a metric on the process' own {@code /metrics}; NaN when absent. */
  public double selfMetric(String name) throws Exception {
    List<Double> values = selfMetricValues(name);
    return values.isEmpty() ? Double.NaN : values.stream().mapToDouble(Double::doubleValue).sum();
  }

  /** The values of every line (each label set) of a metric on the process' own {@code /metrics}. */
  public List<Double> selfMetricValues(String name) throws Exception {
    String text = http.send(HttpRequest.newBuilder(URI.create(url() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    List<Double> out = new java.util.ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        out.add(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
      }
    }
    return out;
  }

  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
