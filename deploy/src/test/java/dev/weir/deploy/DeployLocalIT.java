package dev.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code deploy/local/start} brings the Kafka-mode cluster up from scratch, the README's example
 * runs against it as written, every metric the Grafana dashboard and the alert rules use is one
 * the running processes export, and {@code deploy/local/stop} stops it all.
 */
class DeployLocalIT {
  static final int[] HTTP_PORTS = {8080, 8081, 8082, 8083, 8084};
  @TempDir Path state;

  String run(List<String> script, long timeoutSeconds) throws Exception {
    Path f = state.resolve("script-" + System.nanoTime() + ".sh");
    Files.writeString(f, "set -euo pipefail\n" + String.join("\n", script) + "\n");
    ProcessBuilder pb = new ProcessBuilder("bash", f.toString()).directory(Repo.root().toFile())
        .redirectErrorStream(true);
    pb.environment().put("WEIR_LOCAL_DIR", state.resolve("cluster").toString());
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + script);
    }
    String text = new String(out, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as("%s\n%s", script, text).isZero();
    return text;
  }

  /** The shell block that follows the local-example marker in the README. */
  static List<String> readmeExample() throws IOException {
    String readme = Files.readString(Repo.root().resolve("README.md"));
    int marker = readme.indexOf("<!-- local-example");
    assertThat(marker).isPositive();
    int start = readme.indexOf("```sh\n", marker) + "```sh\n".length();
    int end = readme.indexOf("```", start);
    return List.of(readme.substring(start, end).split("\n"));
  }

  static String get(int port, String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .build(), HttpResponse.BodyHandlers.ofString()).body();
  }

  static boolean listening(int port) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void theLocalClusterStartsRunsTheReadmeExampleAndStops() throws Exception {
    List<String> example = readmeExample();
    List<String> upToStop = new ArrayList<>();
    List<String> stop = new ArrayList<>();
    for (String line : example) {
      (line.startsWith("deploy/local/stop") ? stop : upToStop).add(line);
    }
    assertThat(upToStop.get(0)).startsWith("deploy/local/start");
    assertThat(stop).hasSize(1);
    try {
      String out = run(upToStop, 600);
      // Exactly one ingester holds the series, with the sample just written.
      assertThat(Pattern.compile("\\{\"metric\":\\{\"__name__\":\"room_temperature_celsius\",\"room\":\"kitchen\"},"
          + "\"values\":\\[21.5],\"timestamps\":\\[\\d+]}").matcher(out).results().count()).as(out).isEqualTo(1);

      // Make the event-driven series exist: a refused sample at the distributor, an out-of-order
      // one refused by an ingester after Kafka.
      long now = System.currentTimeMillis();
      run(List.of(
          "curl -s -o /dev/null -H 'X-Scope-OrgID: demo' --data-binary '{\"metric\":{\"__name__\":\"x\",\"bad-label\":\"y\"},"
              + "\"values\":[1],\"timestamps\":[" + now + "]}' localhost:8080/api/v1/import",
          "curl -s -H 'X-Scope-OrgID: demo' --data-binary '{\"metric\":{\"__name__\":\"room_temperature_celsius\","
              + "\"room\":\"kitchen\"},\"values\":[20],\"timestamps\":[" + (now - 3_600_000) + "]}'"
              + " localhost:8080/api/v1/import"), 60);
      Set<String> exported = new TreeSet<>();
      for (int port : HTTP_PORTS) {
        get(port, "/api/v1/export?match[]=room_temperature_celsius"); // settle
        for (String line : get(port, "/metrics").split("\n")) {
          Matcher m = Pattern.compile("^(weir_[a-z0-9_]+)").matcher(line);
          if (m.find()) {
            exported.add(m.group(1));
          }
        }
      }
      Set<String> used = new TreeSet<>();
      Path deploy = Repo.root().resolve("deploy");
      JsonNode dashboard = new ObjectMapper().readTree(deploy.resolve("grafana/weir-dashboard.json").toFile());
      List<String> exprs = dashboard.findValuesAsText("expr");
      assertThat(exprs).hasSizeGreaterThan(15);
      exprs.forEach(e -> used.addAll(names(e)));
      used.addAll(names(Files.readString(deploy.resolve("prometheus/weir-alerts.yaml"))));
      // Series that appear only after an event the local cluster does not provoke, or only on a
      // target it does not run (store-gateway, compactor) or on ingesters that ship blocks (here the
      // block-builder owns them): their names must at least be registered in the sources.
      Set<String> eventOnly = Set.of("weir_ingest_storage_reader_client_errors_total",
          "weir_block_builder_flush_failures_total", "weir_ingest_storage_reader_missed_records_total",
          "weir_bucket_store_last_successful_sync_timestamp_seconds", "weir_bucket_store_block_load_failures_total",
          "weir_ingester_shipper_pending_blocks", "weir_ingester_shipper_syncs_total",
          "weir_compactor_block_cleanup_last_successful_run_timestamp_seconds",
          // counted per reason, so created at the first offset reset
          "weir_block_builder_offset_reset_total", "weir_ingest_storage_reader_offset_resets_total");
      for (String name : used) {
        if (eventOnly.contains(name) && !exported.contains(name)) {
          assertThat(sourcesMention(meterName(name))).as("meter %s in the sources", meterName(name)).isTrue();
        } else {
          assertThat(exported).as("metric %s used by the dashboard or alerts", name).contains(name);
        }
      }
    } finally {
      run(stop, 180);
    }
    for (int port : HTTP_PORTS) {
      assertThat(listening(port)).as("port %d after stop", port).isFalse();
    }
    assertThat(listening(9092)).isFalse();
    assertThat(listening(2379)).isFalse();
  }

  @Test
  void twoZonesOfTwoPartitionsEachHoldEverySeriesOncePerZone() throws Exception {
    try {
      String out = run(List.of("deploy/local/start --zones 2 --partitions 2"), 600);
      assertThat(out).contains("ingester-zone-b-1: http :8103 grpc :9103");
      String ring = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:8080/ingester/partition-ring")).header("Accept", "application/json").build(),
          HttpResponse.BodyHandlers.ofString()).body();
      JsonNode partitions = new ObjectMapper().readTree(ring).get("partitions");
      assertThat(partitions).as(ring).hasSize(2);
      for (JsonNode p : partitions) {
        assertThat(p.get("owners")).as(ring).extracting(JsonNode::asText).containsExactlyInAnyOrder(
            "ingester-zone-a-" + p.get("id").asInt(), "ingester-zone-b-" + p.get("id").asInt());
      }
      run(List.of("curl -sf -H 'X-Scope-OrgID: demo' --data-binary '{\"metric\":{\"__name__\":\"zones\"},"
          + "\"values\":[1],\"timestamps\":[" + System.currentTimeMillis() + "]}' localhost:8080/api/v1/import"), 60);
      int holders = 0;
      for (int port : new int[] {8081, 8082, 8083, 8103}) {
        holders += run(List.of("curl -s -H 'X-Scope-OrgID: demo' -H 'X-Read-Consistency: strong'"
            + " 'localhost:" + port + "/api/v1/export?match[]=zones'"), 60).contains("\"zones\"") ? 1 : 0;
      }
      assertThat(holders).as("one ingester per zone holds the series").isEqualTo(2);
    } finally {
      run(List.of("deploy/local/stop"), 180);
    }
    for (int port : new int[] {8080, 8081, 8082, 8083, 8084, 8103}) {
      assertThat(listening(port)).as("port %d after stop", port).isFalse();
    }
  }

  static Set<String> names(String text) {
    Set<String> out = new TreeSet<>();
    Matcher m = Pattern.compile("\\b(weir_[a-z0-9_]+)").matcher(text);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  /** weir_block_builder_flush_failures_total → weir.block.builder.flush.failures (Micrometer's name). */
  static String meterName(String promName) {
    return promName.replaceAll("_(total|bucket|count|sum|max)$", "").replace('_', '.');
  }

  static boolean sourcesMention(String meter) throws IOException {
    String suffix = meter.replaceFirst("^weir\\.(block\\.builder|ingest\\.storage\\.reader)\\.", "");
    try (Stream<Path> files = Files.walk(Repo.root())) {
      return files.filter(f -> f.toString().endsWith(".java") && f.toString().contains("/src/main/"))
          .anyMatch(f -> {
            try {
              return Files.readString(f).contains("\"" + suffix + "\"") || Files.readString(f).contains(meter);
            } catch (IOException e) {
              return false;
            }
          });
    }
  }
}
