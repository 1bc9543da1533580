package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PromQL over Weir equals PromQL over Prometheus' own TSDB. Debian's Prometheus 2.42 ("A")
 * scrapes itself and Weir every second for 75 s and remote-writes everything twice: to a
 * classic-mode Weir, and to a Kafka-mode distributor whose one partition a separate ingester
 * consumes. Then A stops scraping and flushes its queues, and a second, empty Prometheus ("B") per
 * mode reads from that Weir through {@code remote_read}: every query evaluated over the same
 * range gives the same result on B as on A. Multitenancy is off (Prometheus 2.42 sends no tenant
 * header), so the data is stored under the tenant {@code anonymous}.
 */
class PrometheusCompatibilityIT {
  /**
   * How long A scrapes. The queries run from 20 s after the start (first scrapes and queues
   * settle) to 2 s before the end, so 67 s gives 46 steps: the early ones evaluate the ranges of
   * {@link #QUERIES} over a partial window at the series' start, and the last ~4 (after 61 s)
   * evaluate even the longest range, 1m, over a full window of samples. Longer adds steps of the
   * same kinds only.
   */
  static final Duration SCRAPE_FOR = Duration.ofSeconds(67);
  static final Duration STEP = Duration.ofSeconds(1);
  static final List<String> QUERIES = List.of(
      "up",
      "rate(prometheus_http_requests_total[30s])",
      "irate(process_cpu_seconds_total[10s])",
      "sum by (job) (scrape_samples_scraped)",
      "sum by (handler) (rate(prometheus_http_request_duration_seconds_count[30s]))",
      "histogram_quantile(0.9, sum by (le) (rate(prometheus_http_request_duration_seconds_bucket[30s])))",
      "histogram_quantile(0.99, sum by (le, route) (rate(weir_request_duration_seconds_bucket{job=\"weir\"}[1m])))",
      "count by (job) ({__name__=~\"process_.+\"})",
      "max_over_time(process_resident_memory_bytes[1m])",
      "prometheus_tsdb_head_series + 0",
      "absent(no_such_metric)",
      "absent(up{job=\"weir\"})");
  /** Queries whose correct answer is empty; every other one must have data on A. */
  static final List<String> EMPTY_ON_PURPOSE = List.of("absent(up{job=\"weir\"})");

  @TempDir static Path dir;
  static final List<AutoCloseable> running = new ArrayList<>();
  static WeirProcess classic;
  static WeirProcess kafkaIngester;
  static PrometheusProcess source;
  static long rangeStart;
  static long rangeEnd;

  static String sourceConfig(int selfPort, boolean scrape) {
    StringBuilder c = new StringBuilder("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n");
    if (scrape) {
      c.append("scrape_configs:\n")
          .append("  - job_name: prometheus\n    static_configs: [{targets: ['127.0.0.1:").append(selfPort).append("']}]\n")
          .append("  - job_name: weir\n    static_configs: [{targets: ['127.0.0.1:").append(classic.httpPort())
          .append("']}]\n");
    }
    c.append("remote_write:\n");
    for (String url : List.of(classic.httpUrl(), distributorUrl)) {
      c.append("  - url: ").append(url).append("/api/v1/push\n")
          .append("    queue_config: {batch_send_deadline: 1s, max_samples_per_send: 2000, min_backoff: 100ms}\n")
          .append("    metadata_config: {send_interval: 10s}\n");
    }
    return c.toString();
  }

  static String distributorUrl;

  @BeforeAll
  static void scrapeAndWrite() throws Exception {
    classic = WeirProcess.start(dir.resolve("weir-classic"), "--auth.multitenancy-enabled=false");
    running.add(classic);

    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    kafkaIngester = WeirProcess.start(dir.resolve("weir-ingester"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-0", "--auth.multitenancy-enabled=false"));
    running.add(kafkaIngester);
    WeirProcess distributor = WeirProcess.start(dir.resolve("weir-distributor"), c.args("--target=distributor",
        "--auth.multitenancy-enabled=false"));
    running.add(distributor);
    distributorUrl = distributor.httpUrl();
    await().atMost(30, TimeUnit.SECONDS)
        .until(() -> distributor.get("/ingester/partition-ring").contains("<td>ACTIVE</td>"));

    int port = PrometheusProcess.reservePort();
    Path sourceDir = dir.resolve("prometheus-a");
    source = PrometheusProcess.start(sourceDir, port, sourceConfig(port, true));
    running.add(source);
    long started = System.currentTimeMillis();
    Thread.sleep(SCRAPE_FOR.toMillis());

    // Stop scraping (the remote-write queues stay as they are) and let the queues drain.
    long stopped = System.currentTimeMillis();
    source.reload(sourceDir, sourceConfig(port, false));
    // Drained: nothing pending, and each of the two queues has sent the newest sample appended.
    await().atMost(2, TimeUnit.MINUTES).pollDelay(Duration.ofSeconds(3)).until(() -> {
      double newest = source.selfMetric("prometheus_remote_storage_highest_timestamp_in_seconds");
      List<Double> sent = source.selfMetricValues("prometheus_remote_storage_queue_highest_sent_timestamp_seconds");
      return source.selfMetric("prometheus_remote_storage_samples_pending") == 0 && sent.size() == 2
          && sent.stream().allMatch(s -> s >= newest);
    });
    assertThat(source.selfMetric("prometheus_remote_storage_samples_failed_total"))
        .as("samples Weir refused (see %s)", sourceDir).isZero();
    assertThat(source.selfMetric("prometheus_remote_storage_samples_dropped_total")).isZero();

    // The Kafka-mode ingester has consumed everything the distributor produced.
    HttpResponse<String> strong = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(kafkaIngester.httpUrl() + "/api/v1/series?match[]=up"))
        .header("X-Read-Consistency", "strong").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(strong.statusCode()).as(strong.body()).isEqualTo(200);

    rangeStart = (started / 1000 + 20) * 1000;
    rangeEnd = (stopped / 1000 - 2) * 1000;
  }

  @AfterAll
  static void stopAll() throws Exception {
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  static String readerConfig(WeirProcess weir) {
    return "global:\n  scrape_interval: 1m\nremote_read:\n  - url: " + weir.httpUrl() + "/api/v1/read\n"
        + "    read_recent: true\n";
  }

  static void assertSameAnswers(WeirProcess weir, String name) throws Exception {
    try (PrometheusProcess reader = PrometheusProcess.start(dir.resolve("prometheus-b-" + name),
        PrometheusProcess.reservePort(), readerConfig(weir))) {
      assertThat(reader.selfMetric("prometheus_tsdb_head_series")).as("B has no local data").isZero();
      for (String q : QUERIES) {
        JsonNode own = source.queryRange(q, rangeStart, rangeEnd, STEP).get("data");
        JsonNode remote = reader.queryRange(q, rangeStart, rangeEnd, STEP).get("data");
        if (!EMPTY_ON_PURPOSE.contains(q)) {
          assertThat(own.get("result").size()).as("%s has data on Prometheus A", q).isPositive();
        }
        assertThat(remote).as("%s through %s Weir", q, name).isEqualTo(own);
      }
    }
    // The metadata Prometheus remote-wrote along is served too.
    String metadata = weir.get("/api/v1/metadata?metric=prometheus_http_requests_total");
    assertThat(metadata).contains("\"prometheus_http_requests_total\":[{\"type\":\"counter\"");
  }

  @Test
  void promqlOverClassicWeirEqualsPrometheus() throws Exception {
    assertSameAnswers(classic, "classic");
  }

  @Test
  void promqlOverKafkaModeWeirEqualsPrometheus() throws Exception {
    assertSameAnswers(kafkaIngester, "kafka");
  }
}
