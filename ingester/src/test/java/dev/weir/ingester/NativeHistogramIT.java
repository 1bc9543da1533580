package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.ChunkedReadResponse;
import dev.weir.proto.prompb.ChunkedSeries;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.QueryResult;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.ReadResponse;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.HistogramChunkSamples;
import dev.weir.storage.wire.HistogramProtos;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Native histograms from a real client to Weir and back: Prometheus client_java 1.x exposes a
 * native histogram (protobuf exposition, observations from a fixed seed), Debian's Prometheus 2.42
 * ({@code --enable-feature=native-histograms}) scrapes it and remote-writes it to Weir
 * ({@code send_native_histograms: true}). Prometheus 2.42 cannot remote-read native histograms
 * (prometheus/prometheus#11204), so the test compares instead: every histogram sample Weir returns
 * over remote read, SAMPLES and STREAMED_XOR_CHUNKS alike, equals the sample Prometheus' own TSDB
 * returns at that timestamp (count, sum, every bucket's bounds and count); after a kill -9 and a
 * restart (WAL replay) Weir returns the same samples again. Then a second Prometheus 2.42 opened on
 * a copy of Weir's tenant directory (its WAL is in Prometheus' format) answers
 * {@code histogram_count}, {@code histogram_sum} and {@code histogram_quantile} exactly as the
 * scraping Prometheus did over its own TSDB.
 */
class NativeHistogramIT {
  static final String METRIC = "request_latency_seconds";
  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir
  Path dir;

  /** One histogram sample in comparable form: count, sum, and "lower upper count" per non-empty bucket. */
  record Sample(double count, double sum, List<String> buckets) {}

  @Test
  void histogramsScrapedByPrometheusReadBackFromWeirExactly() throws Exception {
    PrometheusRegistry registry = new PrometheusRegistry();
    Histogram latency = Histogram.builder().name(METRIC).help("Request latency.").nativeOnly().register(registry);
    Random rnd = new Random(42);
    ScheduledExecutorService observer = Executors.newSingleThreadScheduledExecutor();
    observer.scheduleAtFixedRate(() -> {
      for (int i = 0; i < 25; i++) {
        latency.observe(rnd.nextDouble() < 0.05 ? 0 : Math.exp(rnd.nextGaussian() - 3));
      }
    }, 0, 100, TimeUnit.MILLISECONDS);
    try (HTTPServer target = HTTPServer.builder().port(0).registry(registry).buildAndStart();
        WeirProcess weir = WeirProcess.start(dir.resolve("weir"), "--auth.multitenancy-enabled=false")) {
      int port = PrometheusProcess.reservePort();
      String config = "global:\n  scrape_interval: 1s\n"
          + "scrape_configs:\n  - job_name: app\n    static_configs: [{targets: ['127.0.0.1:" + target.getPort()
          + "']}]\n"
          + "remote_write:\n  - url: " + weir.httpUrl() + "/api/v1/push\n    send_native_histograms: true\n"
          + "    queue_config: {batch_send_deadline: 1s, min_backoff: 100ms}\n";
      try (PrometheusProcess prom = PrometheusProcess.start(dir.resolve("prometheus"), port, config,
          "--enable-feature=native-histograms")) {
        long start = System.currentTimeMillis() - 60_000;
        // Enough scrapes, all of them remote-written: Weir holds every one Prometheus holds.
        await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofSeconds(1)).until(() -> {
          TreeMap<Long, Sample> p = prometheus(prom, start);
          return p.size() >= 8 && weirSamples(weir, start).keySet().containsAll(p.keySet());
        });
        observer.shutdownNow();
        TreeMap<Long, Sample> expected = prometheus(prom, start);
        // A scrape after the wait above is remote-written a moment later.
        await().atMost(Duration.ofSeconds(15)).until(() -> weirSamples(weir, start).keySet()
            .containsAll(expected.keySet()));
        TreeMap<Long, Sample> samples = weirSamples(weir, start);
        TreeMap<Long, Sample> streamed = weirStreamed(weir, start);
        assertThat(expected).hasSizeGreaterThanOrEqualTo(8);
        assertThat(expected.values()).anySatisfy(s -> assertThat(s.buckets()).hasSizeGreaterThan(5));
        for (Long t : expected.keySet()) {
          assertThat(samples.get(t)).as("SAMPLES at %d", t).isEqualTo(expected.get(t));
          assertThat(streamed.get(t)).as("STREAMED_XOR_CHUNKS at %d", t).isEqualTo(expected.get(t));
        }
        // PromQL over Prometheus' own TSDB, to compare with PromQL over Weir's data below.
        long from = expected.firstKey();
        long to = expected.lastKey();
        java.util.Map<String, JsonNode> promql = new java.util.LinkedHashMap<>();
        for (String q : PROMQL) {
          promql.put(q, prom.queryRange(q, from, to, Duration.ofSeconds(1)).path("data").path("result"));
        }
        prom.close(); // nothing more is written: what Weir acked is what it must return

        TreeMap<Long, Sample> acked = weirSamples(weir, start);
        weir.kill();
        weir.restart();
        assertThat(weirSamples(weir, start)).as("after kill -9 and WAL replay").isEqualTo(acked);
        assertThat(weirStreamed(weir, start)).isEqualTo(acked);

        // Weir's WAL is a Prometheus WAL: a second Prometheus 2.42 opened on a copy of Weir's tenant
        // directory replays it (histogram records included) and answers the same PromQL exactly.
        Path copy = dir.resolve("prometheus-over-weir");
        copyTree(onlyTenantDir(dir.resolve("weir/data/tsdb")), copy.resolve("data"));
        try (PrometheusProcess overWeir = PrometheusProcess.start(copy, PrometheusProcess.reservePort(),
            "global: {scrape_interval: 1h}\n", "--enable-feature=native-histograms",
            "--storage.tsdb.retention.time=100y")) {
          for (String q : PROMQL) {
            JsonNode want = promql.get(q);
            assertThat(want.size()).as(q).isEqualTo(1);
            // One point per 1 s step from the first scrape to the last. Scrape times jitter by a few
            // milliseconds, so 8 scrapes can span just under 7 s (7 steps, not 8). A rate needs two
            // scrapes in its 5 s window: the first step has none, and the second may have none either
            // when the interval ran a little over 1 s.
            long steps = (to - from) / 1000 + 1;
            assertThat(steps).isGreaterThanOrEqualTo(7);
            assertThat(want.get(0).path("values").size()).as(q)
                .isGreaterThanOrEqualTo((int) (q.contains("rate(") ? steps - 2 : steps));
            assertThat(overWeir.queryRange(q, from, to, Duration.ofSeconds(1)).path("data").path("result"))
                .as(q + " over Weir's data vs over Prometheus' own").isEqualTo(want);
          }
        }
      }
    } finally {
      observer.shutdownNow();
    }
  }

  static final List<String> PROMQL = List.of("histogram_count(" + METRIC + ")", "histogram_sum(" + METRIC + ")",
      "histogram_quantile(0.9, " + METRIC + ")", "histogram_quantile(0.5, rate(" + METRIC + "[5s]))");

  static Path onlyTenantDir(Path tsdb) throws java.io.IOException {
    try (var dirs = java.nio.file.Files.list(tsdb)) {
      List<Path> all = dirs.filter(java.nio.file.Files::isDirectory).toList();
      assertThat(all).as("tenant directories in " + tsdb).hasSize(1);
      return all.get(0);
    }
  }

  static void copyTree(Path from, Path to) throws java.io.IOException {
    try (var files = java.nio.file.Files.walk(from)) {
      for (Path p : files.toList()) {
        Path dest = to.resolve(from.relativize(p).toString());
        if (java.nio.file.Files.isDirectory(p)) {
          java.nio.file.Files.createDirectories(dest);
        } else {
          java.nio.file.Files.copy(p, dest);
        }
      }
    }
  }

  /** Prometheus' raw samples of the histogram since {@code start}, from its own TSDB. */
  static TreeMap<Long, Sample> prometheus(PrometheusProcess prom, long start) throws Exception {
    long now = System.currentTimeMillis();
    String q = METRIC + "[" + ((now - start) / 1000 + 1) + "s]";
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(prom.url() + "/api/v1/query?query="
        + URLEncoder.encode(q, StandardCharsets.UTF_8) + "&time=" + now / 1000.0)).build(),
        HttpResponse.BodyHandlers.ofString());
    JsonNode result = JSON.readTree(r.body()).path("data").path("result");
    TreeMap<Long, Sample> out = new TreeMap<>();
    for (JsonNode series : result) {
      for (JsonNode point : series.path("histograms")) {
        long t = Math.round(point.get(0).asDouble() * 1000);
        JsonNode h = point.get(1);
        List<String> buckets = new ArrayList<>();
        for (JsonNode b : h.path("buckets")) {
          double c = Double.parseDouble(b.get(3).asText());
          if (c != 0) {
            buckets.add(bound(Double.parseDouble(b.get(1).asText())) + " " + bound(Double.parseDouble(b.get(2).asText()))
                + " " + c);
          }
        }
        buckets.sort(null);
        out.put(t, new Sample(Double.parseDouble(h.get("count").asText()), Double.parseDouble(h.get("sum").asText()),
            buckets));
      }
    }
    return out;
  }

  /** A bound rounded to 12 significant digits: Prometheus computes bounds with its tables, we with pow. */
  static String bound(double b) {
    return b == 0 ? "0" : new java.math.BigDecimal(b).round(new java.math.MathContext(12)).stripTrailingZeros()
        .toString();
  }

  /** Our histogram in the comparable form: the buckets Prometheus' JSON lists (zero bucket, negatives, positives). */
  static Sample comparable(NativeHistogram h) {
    List<String> buckets = new ArrayList<>();
    if (h.zeroCount() != 0) {
      buckets.add(bound(-h.zeroThreshold()) + " " + bound(h.zeroThreshold()) + " " + h.zeroCount());
    }
    addSide(buckets, h.schema(), h.negativeSpans(), h.negativeBuckets(), true);
    addSide(buckets, h.schema(), h.positiveSpans(), h.positiveBuckets(), false);
    buckets.sort(null);
    return new Sample(h.count(), h.sum(), buckets);
  }

  private static void addSide(List<String> out, int schema, int[] spans, double[] counts, boolean negative) {
    long idx = 0;
    int k = 0;
    for (int s = 0; s < spans.length; s += 2) {
      idx += spans[s];
      for (int j = 0; j < spans[s + 1]; j++, idx++, k++) {
        if (counts[k] == 0) {
          continue;
        }
        double upper = Math.pow(2, idx * Math.pow(2, -schema));
        double lower = Math.pow(2, (idx - 1) * Math.pow(2, -schema));
        out.add(negative ? bound(-upper) + " " + bound(-lower) + " " + counts[k]
            : bound(lower) + " " + bound(upper) + " " + counts[k]);
      }
    }
  }

  static ReadRequest request(long start, ReadRequest.ResponseType type) {
    return ReadRequest.newBuilder().addAcceptedResponseTypes(type).addQueries(Query.newBuilder()
        .setStartTimestampMs(start).setEndTimestampMs(System.currentTimeMillis() + 60_000)
        .addMatchers(LabelMatcher.newBuilder().setName("__name__").setValue(METRIC))).build();
  }

  static TreeMap<Long, Sample> weirSamples(WeirProcess weir, long start) throws Exception {
    RemoteClient.Response r = new RemoteClient(weir.httpUrl()).read(request(start, ReadRequest.ResponseType.SAMPLES));
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    TreeMap<Long, Sample> out = new TreeMap<>();
    for (QueryResult q : ReadResponse.parseFrom(Snappy.uncompress(r.body())).getResultsList()) {
      for (TimeSeries ts : q.getTimeseriesList()) {
        for (dev.weir.proto.prompb.Histogram h : ts.getHistogramsList()) {
          NativeHistogram nh = HistogramProtos.fromProto(h).histogram();
          assertThat(nh).isNotNull();
          out.put(h.getTimestamp(), comparable(nh));
        }
      }
    }
    return out;
  }

  static TreeMap<Long, Sample> weirStreamed(WeirProcess weir, long start) throws Exception {
    RemoteClient.Response r = new RemoteClient(weir.httpUrl())
        .read(request(start, ReadRequest.ResponseType.STREAMED_XOR_CHUNKS));
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    TreeMap<Long, Sample> out = new TreeMap<>();
    int pos = 0;
    byte[] b = r.body();
    while (pos < b.length) {
      long len = 0;
      int shift = 0;
      while (true) {
        int x = b[pos++] & 0xff;
        len |= (long) (x & 0x7f) << shift;
        if (x < 0x80) {
          break;
        }
        shift += 7;
      }
      pos += 4; // CRC32C, checked by Prometheus' reader; the protobuf parse below checks the bytes
      ChunkedReadResponse msg = ChunkedReadResponse.parseFrom(java.util.Arrays.copyOfRange(b, pos, pos + (int) len));
      pos += (int) len;
      for (ChunkedSeries cs : msg.getChunkedSeriesList()) {
        for (dev.weir.proto.prompb.Chunk c : cs.getChunksList()) {
          ChunkData cd = new ChunkData(c.getMinTimeMs(), c.getMaxTimeMs(), c.getData().toByteArray(),
              (byte) c.getTypeValue());
          HistogramChunkSamples.forEach(cd, Long.MIN_VALUE, Long.MAX_VALUE, (t, h) -> out.put(t, comparable(h)));
        }
      }
    }
    return out;
  }

}
