package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The global ingestion-rate strategy with real processes, Kafka and etcd: two distributors
 * ({@code --target=distributor}, Kafka mode) join the distributor ring and share one tenant's
 * traffic, each client offering well over the limit; over a 20 s window the samples both
 * accepted together stay between 75 % and 110 % of what the tenant's limit allows in that
 * (measured) window, not twice that. When one distributor stops, the other admits the whole
 * limit alone; a distributor with the {@code local} strategy, running beside it, admits the whole
 * limit too and does not join the distributor ring. Every accepted sample is then found in the
 * ingester exactly once.
 *
 * <p>The window is counted in acknowledged requests (their completion time), not timed: the
 * bound is correctness (the token buckets' refill), and saturating clients keep the buckets empty
 * at the window's edges, so a slow machine changes how many requests are refused, not how many are
 * accepted.
 */
class GlobalRateLimitIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP = HttpClient.newHttpClient();
  static final double LIMIT = 1000; // samples/s for the tenant, fleet-wide
  static final int SERIES = 100; // samples per write request
  static final Duration PACE = Duration.ofMillis(15); // each client offers up to ~6,600 samples/s
  static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(12);

  @TempDir Path dir;

  @Test
  void twoGlobalDistributorsTogetherAdmitTheTenantsLimitAndALocalOneAdmitsItAlone() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long t0 = System.currentTimeMillis() - 120_000;
    AckLedger viaD1 = new AckLedger("shared", "via_d1", SERIES, t0, 10);
    AckLedger viaD2 = new AckLedger("shared", "via_d2", SERIES, t0, 10);
    AckLedger viaLocal = new AckLedger("shared", "via_local", SERIES, t0, 10);
    try (WeirProcess ingester = WeirProcess.start(dir.resolve("ingester"),
            c.args("--target=ingester", "--ingester.id=ingester-zone-a-0"));
        WeirProcess d1 = distributor(c, "distributor-1", "global");
        WeirProcess d2 = distributor(c, "distributor-2", "global")) {
      for (WeirProcess d : List.of(d1, d2)) {
        awaitPartitionActiveSeenBy(d);
        awaitHealthyDistributors(d, 2);
      }

      // Phase 1: both global distributors saturated; together they admit the tenant's limit.
      long[] window;
      LedgerWriter w1 = new LedgerWriter(viaD1, LedgerWriter.remoteWrite(d1.httpUrl(), Duration.ofSeconds(30)));
      LedgerWriter w2 = new LedgerWriter(viaD2, LedgerWriter.remoteWrite(d2.httpUrl(), Duration.ofSeconds(30)));
      try (LedgerWriter a = w1.startBackground("d1", PACE); LedgerWriter b = w2.startBackground("d2", PACE)) {
        window = measure();
      }
      long both = (w1.acksBetween(window[0], window[1]) + w2.acksBetween(window[0], window[1])) * SERIES;
      assertAtTheLimit("two global distributors together", both, window);
      assertOnlyRateLimited(viaD1);
      assertOnlyRateLimited(viaD2);
      assertThat(viaD1.toString()).as("the 429 says how the limit is shared")
          .contains("across all distributors (2 healthy in the distributor ring: 500.0 samples/s here)");

      // Phase 2: distributor-2 leaves the ring; distributor-1 alone, and a local one beside it.
      assertThat(d2.terminate(Duration.ofSeconds(30))).isIn(0, 143);
      awaitHealthyDistributors(d1, 1);
      try (WeirProcess local = distributor(c, "distributor-3", "local")) {
        awaitPartitionActiveSeenBy(local);
        assertThat(HTTP.send(HttpRequest.newBuilder(URI.create(local.httpUrl() + "/distributor/ring")).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode()).as("a local distributor keeps no ring").isEqualTo(404);
        assertThat(healthyDistributors(d1)).as("and does not join it").isEqualTo(1);
        assertThat(d1.metric("weir_distributor_ring_healthy_instances")).isEqualTo(1);
        assertThat(local.metric("weir_distributor_ring_healthy_instances")).as("no ring, no gauge").isNaN();
        LedgerWriter again = new LedgerWriter(viaD1, LedgerWriter.remoteWrite(d1.httpUrl(), Duration.ofSeconds(30)));
        LedgerWriter w3 = new LedgerWriter(viaLocal, LedgerWriter.remoteWrite(local.httpUrl(), Duration.ofSeconds(30)));
        try (LedgerWriter a = again.startBackground("d1-alone", PACE);
            LedgerWriter b = w3.startBackground("local", PACE)) {
          window = measure();
        }
        assertAtTheLimit("the global distributor left alone", again.acksBetween(window[0], window[1]) * SERIES,
            window);
        assertAtTheLimit("the local distributor", w3.acksBetween(window[0], window[1]) * SERIES, window);
        assertOnlyRateLimited(viaLocal);
        assertThat(viaLocal.toString()).contains("ingestion rate limit of 1000.0 samples/s with burst");
      }

      ExportClient export = new ExportClient(ingester.httpUrl());
      await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
        for (AckLedger l : List.of(viaD1, viaD2, viaLocal)) {
          AckLedger.Report r = l.check(export);
          assertThat(r.ok()).as("%s%n%s", l, r).isTrue();
          assertThat(r.foundSamples()).as("%s: only accepted samples were stored", l).isEqualTo(r.ackedSamples());
        }
      });
    }
  }

  private WeirProcess distributor(KafkaCluster c, String id, String strategy) throws Exception {
    return WeirProcess.start(dir.resolve(id), c.args("--target=distributor", "--ingester.id=" + id,
        "--distributor.ingestion-rate-limit=" + LIMIT, "--distributor.ingestion-burst-size=500",
        "--distributor.ingestion-rate-limit-strategy=" + strategy, "--distributor.ring.heartbeat-period=1s",
        "--distributor.ring.heartbeat-timeout=15s"));
  }

  /** A 3 s warm-up (the buckets' initial burst is spent), then a window of about 12 s: {start, end}. */
  private static long[] measure() throws InterruptedException {
    Thread.sleep(3_000);
    long start = System.nanoTime();
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(WINDOW_NANOS));
    return new long[] {start, System.nanoTime()};
  }

  /**
   * Within +10 % of the limit (never more is admitted) and at least 75 % of it: a token bucket
   * loses what it would have refilled beyond its burst while the distributor is starved of CPU (a
   * busy 2-core machine ran it at -10.4 % once), and 75 % still tells a fleet-wide limit shared
   * right (1000/s) from one split in two (500/s) or not shared at all (2000/s).
   */
  private static void assertAtTheLimit(String what, long acceptedSamples, long[] window) {
    double expected = LIMIT * (window[1] - window[0]) / 1e9;
    System.out.printf("global-rate-limit: %s accepted %d samples in %.3f s, the limit allows %.0f (%+.1f%%)%n", what,
        acceptedSamples, (window[1] - window[0]) / 1e9, expected, (acceptedSamples / expected - 1) * 100);
    assertThat((double) acceptedSamples).as("%s: accepted %d samples in %.1f s, the limit allows %.0f", what,
        acceptedSamples, (window[1] - window[0]) / 1e9, expected).isBetween(expected * 0.75, expected * 1.1);
  }

  /** The clients offered more than the limit (some 429s) and nothing failed otherwise. */
  private static void assertOnlyRateLimited(AckLedger l) {
    Map<String, Long> refusals = l.refusals();
    assertThat(refusals.keySet()).as("%s", l).containsExactly("http 429");
    assertThat(refusals.get("http 429")).as("the client offered more than the limit: %s", l)
        .isGreaterThan((long) l.ackedWrites());
  }

  private static void awaitHealthyDistributors(WeirProcess d, int n) {
    await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(healthyDistributors(d)).as(d.logTail(20)).isEqualTo(n));
  }

  private static int healthyDistributors(WeirProcess d) throws Exception {
    JsonNode ring = getJson(d, "/distributor/ring");
    int n = 0;
    for (JsonNode i : ring.get("instances")) {
      n += i.get("healthy").asBoolean() && i.get("state").asText().equals("ACTIVE") ? 1 : 0;
    }
    return n;
  }

  private static void awaitPartitionActiveSeenBy(WeirProcess d) {
    await().atMost(90, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
      List<String> states = new ArrayList<>();
      getJson(d, "/ingester/partition-ring").get("partitions").forEach(p -> states.add(p.get("state").asText()));
      assertThat(states).containsExactly("ACTIVE");
    });
  }

  private static JsonNode getJson(WeirProcess d, String path) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(d.httpUrl() + path))
        .header("Accept", "application/json").timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }
}
