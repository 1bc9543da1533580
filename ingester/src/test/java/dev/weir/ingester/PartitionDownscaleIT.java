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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale-in, first step, with real processes, Kafka and etcd: POST
 * {@code /ingester/prepare-partition-downscale} on partition 1's ingester makes it INACTIVE; once
 * the distributor has seen that, no record is produced to partition 1 any more (its end offset
 * stays) while partition 0 takes every write, and every acknowledged sample is still exported by
 * the two ingesters. DELETE makes it ACTIVE again and it takes writes again. Prepared again, flushed,
 * its blocks shipped and the (5 s) look-back passed, the ingester says it may leave; stopped, it
 * leaves the ring and the partition is removed from it. With etcd down, the
 * request is refused with a 5xx and the state is unchanged once etcd returns; the downscale then
 * goes through, and survives another etcd outage unchanged (same state, same switch time).
 */
class PartitionDownscaleIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String PATH = "/ingester/prepare-partition-downscale";
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  @Test
  void inactivePartitionTakesNoMoreWritesAndEveryAckedSampleStaysReadable() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    AckLedger ledger = new AckLedger("downscale", "downscale_it", 64, System.currentTimeMillis() - 600_000, 1_000);
    List<WeirProcess> ingesters = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        ingesters.add(WeirProcess.launch(dir.resolve("ingester-" + i), c.args("--target=ingester",
            "--ingester.id=ingester-zone-a-" + i, "--ingester.partition-ring.delete-inactive-partition-after=2s",
            // Scale-in readiness within the test: a 5 s look-back, blocks shipped every second.
            "--querier.query-ingesters-within=5s", "--querier.query-store-after=1s",
            "--blocks-storage.tsdb.ship-interval=1s")));
      }
      for (WeirProcess w : ingesters) {
        w.awaitReady(Duration.ofSeconds(90));
      }
      try (WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor"))) {
        awaitStateSeenBy(distributor, 0, "ACTIVE");
        awaitStateSeenBy(distributor, 1, "ACTIVE");
        LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(distributor.httpUrl(),
            Duration.ofSeconds(30)));
        assertThat(writer.write(10)).as("%s%n%s", ledger, distributor.logTail(30)).isEqualTo(10);
        Map<Integer, Long> before = endOffsets(c);
        assertThat(before.get(1)).as("partition 1 took writes while ACTIVE").isPositive();

        HttpResponse<String> post = send(ingesters.get(1), "POST");
        assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
        JsonNode posted = JSON.readTree(post.body());
        assertThat(posted.get("state").asText()).isEqualTo("INACTIVE");
        assertThat(posted.get("timestamp").asLong()).isPositive();
        assertThat(posted.get("ready_to_leave").asBoolean()).isFalse();
        awaitStateSeenBy(distributor, 1, "INACTIVE");
        JsonNode onPage = partitionOnPage(distributor, 1);
        assertThat(onPage.get("state_timestamp").asLong() / 1000).isEqualTo(posted.get("timestamp").asLong());
        assertThat(onPage.get("owners")).extracting(JsonNode::asText).containsExactly("ingester-zone-a-1");
        assertThat(onPage.get("state_change_locked").asBoolean()).isFalse();
        await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> assertThat(partitionOnPage(ingesters.get(1), 1)
            .get("lag_records").asLong()).as("an ingester knows its own partition's lag").isZero());
        // Other partitions' lag comes from Kafka (the owner's committed offset), at most every 10 s.
        await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
          assertThat(partitionOnPage(ingesters.get(1), 0).get("lag_records").asLong())
              .as("partition 0's lag, seen by partition 1's ingester").isZero();
          assertThat(partitionOnPage(distributor, 1).get("lag_records").asLong())
              .as("a distributor asks Kafka too").isZero();
        });

        Map<Integer, Long> inactiveAt = endOffsets(c);
        assertThat(writer.write(10)).as("%s%n%s", ledger, distributor.logTail(30)).isEqualTo(10);
        Map<Integer, Long> after = endOffsets(c);
        assertThat(after.get(1)).as("no record produced to the INACTIVE partition").isEqualTo(inactiveAt.get(1));
        assertThat(after.get(0)).as("partition 0 took the writes").isGreaterThan(inactiveAt.get(0));
        JsonNode got = JSON.readTree(send(ingesters.get(1), "GET").body());
        assertThat(got.get("timestamp").asLong()).isEqualTo(posted.get("timestamp").asLong());

        await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
          AckLedger.Report r = ledger.compare(exportAll(ingesters, ledger));
          assertThat(r.ok()).as("%s%n%s", ledger, r).isTrue();
        });

        HttpResponse<String> delete = send(ingesters.get(1), "DELETE");
        assertThat(delete.statusCode()).as(delete.body()).isEqualTo(200);
        assertThat(JSON.readTree(delete.body()).get("timestamp").asLong()).isZero();
        awaitStateSeenBy(distributor, 1, "ACTIVE");
        Map<Integer, Long> reactivated = endOffsets(c);
        assertThat(writer.write(5)).isEqualTo(5);
        assertThat(endOffsets(c).get(1)).as("partition 1 takes writes again once ACTIVE")
            .isGreaterThan(reactivated.get(1));

        // Scale-in for good: prepared again, its ingester stops and leaves the ring, and the ownerless
        // INACTIVE partition is removed (after 2 s here), so queriers no longer look for an owner.
        assertThat(send(ingesters.get(1), "POST").statusCode()).isEqualTo(200);
        awaitStateSeenBy(distributor, 1, "INACTIVE");
        JsonNode notYet = JSON.readTree(send(ingesters.get(1), "GET").body());
        assertThat(notYet.get("ready_to_leave").asBoolean()).isFalse();
        assertThat(notYet.get("reasons").toString()).as("the head is not in blocks yet").contains("head holds");
        HttpResponse<String> flushed = HTTP.send(HttpRequest.newBuilder(URI.create(ingesters.get(1).httpUrl()
            + "/ingester/flush")).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(flushed.statusCode()).as(flushed.body()).isEqualTo(200);
        assertThat(JSON.readTree(flushed.body()).get("blocks").asInt()).isPositive();
        await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
          JsonNode r = JSON.readTree(send(ingesters.get(1), "GET").body());
          assertThat(r.get("storage").asText()).as(r.toString()).isEqualTo("ok");
          assertThat(r.get("ready_to_leave").asBoolean()).as(r.toString()).isTrue();
        });
        assertThat(ingesters.get(1).terminate(Duration.ofSeconds(30))).isIn(0, 143);
        await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
            assertThat(partitionIds(distributor)).containsExactly(0));
        assertThat(writer.write(5)).isEqualTo(5);
      }
    } finally {
      for (WeirProcess w : ingesters) {
        w.close();
      }
    }
  }

  @Test
  void prepareDownscaleWhileEtcdIsDownIsRefusedAndChangesNothing() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"))) {
      KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), etcd);
      c.broker.createTopic(c.topic, 1);
      try (WeirProcess ingester = WeirProcess.start(dir.resolve("ingester"), c.args("--target=ingester",
          "--ingester.id=ingester-zone-a-0", "--ingester.ring.etcd.dial-timeout=2s"))) {
        await().atMost(30, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() ->
            assertThat(JSON.readTree(send(ingester, "GET").body()).get("state").asText()).isEqualTo("ACTIVE"));
        etcd.stop();
        HttpResponse<String> post = send(ingester, "POST");
        assertThat(post.statusCode()).as(post.body()).isEqualTo(503);
        assertThat(post.body()).contains("nothing was changed");
        etcd.restart();
        await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
          HttpResponse<String> r = send(ingester, "GET");
          assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
          assertThat(JSON.readTree(r.body()).get("state").asText()).isEqualTo("ACTIVE");
          assertThat(JSON.readTree(r.body()).get("timestamp").asLong()).isZero();
        });
        // The operation resumes once etcd is back; a second outage flips nothing.
        HttpResponse<String> resumed = send(ingester, "POST");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        long switched = JSON.readTree(resumed.body()).get("state_timestamp").asLong();
        etcd.stop();
        HttpResponse<String> down = send(ingester, "GET");
        assertThat(down.statusCode()).as(down.body()).isEqualTo(503);
        etcd.restart();
        await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
          HttpResponse<String> r = send(ingester, "GET");
          assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
          assertThat(JSON.readTree(r.body()).get("state").asText()).isEqualTo("INACTIVE");
          assertThat(JSON.readTree(r.body()).get("state_timestamp").asLong()).isEqualTo(switched);
        });
        // Several heartbeats (1 s) after etcd returned: still INACTIVE since the same time.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
            assertThat(JSON.readTree(send(ingester, "GET").body()).get("state_timestamp").asLong())
                .isEqualTo(switched));
      }
    }
  }

  static HttpResponse<String> send(WeirProcess p, String method) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(p.httpUrl() + PATH)).method(method,
        HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(60)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Waits until {@code p}'s own partition-ring page (its ring watcher's view) shows the state. */
  static void awaitStateSeenBy(WeirProcess p, int partition, String state) {
    await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() ->
        assertThat(partitionOnPage(p, partition).get("state").asText()).isEqualTo(state));
  }

  static List<Integer> partitionIds(WeirProcess p) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(p.httpUrl() + "/ingester/partition-ring"))
        .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    List<Integer> ids = new ArrayList<>();
    JSON.readTree(r.body()).get("partitions").forEach(n -> ids.add(n.get("id").asInt()));
    return ids;
  }

  /** The partition's entry on {@code p}'s {@code /ingester/partition-ring} page (JSON). */
  static JsonNode partitionOnPage(WeirProcess p, int partition) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(p.httpUrl() + "/ingester/partition-ring"))
        .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    for (JsonNode n : JSON.readTree(r.body()).get("partitions")) {
      if (n.get("id").asInt() == partition) {
        return n;
      }
    }
    throw new AssertionError("partition " + partition + " not on the page: " + r.body());
  }

  static Map<Integer, Long> endOffsets(KafkaCluster c) throws Exception {
    return endOffsets(c, 2);
  }

  /** The end offsets of partitions 0..partitions-1 of the cluster's topic. */
  static Map<Integer, Long> endOffsets(KafkaCluster c, int partitions) throws Exception {
    try (Admin admin = c.broker.admin()) {
      Map<TopicPartition, OffsetSpec> q = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        q.put(new TopicPartition(c.topic, p), OffsetSpec.latest());
      }
      Map<Integer, Long> out = new TreeMap<>();
      admin.listOffsets(q).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp.partition(), info.offset()));
      return out;
    }
  }

  /** The series of both ingesters, a series split between them merged into one. */
  static Map<String, ExportClient.Series> exportAll(List<WeirProcess> ingesters, AckLedger ledger) throws Exception {
    Map<String, ExportClient.Series> all = new TreeMap<>();
    for (WeirProcess w : ingesters) {
      new ExportClient(w.httpUrl()).export(ledger.tenant, ledger.metric).forEach((k, s) -> all.merge(k, s, (a, b) -> {
        List<Long> ts = new ArrayList<>(a.timestamps());
        ts.addAll(b.timestamps());
        List<Double> vs = new ArrayList<>(a.values());
        vs.addAll(b.values());
        return new ExportClient.Series(k, ts, vs);
      }));
    }
    return all;
  }
}
