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
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd, which holds the rings, is down for 15 s while a classic-mode process and a Kafka-mode
 * process (target all: distributor and ingester of partition 0) take writes. The ring is control
 * plane only: pushes go on being acknowledged and are found; when etcd returns each instance
 * heartbeats again, as its own ring page and etcd's revisions show.
 */
class EtcdFaultsIT {
  static final ObjectMapper JSON = new ObjectMapper();
  /** As long as an etcd failover or a slow restart; longer than the 10 s dial timeout and several heartbeats. */
  static final Duration OUTAGE = Duration.ofSeconds(15);

  @TempDir Path dir;

  @Test
  void etcdDownFifteenSecondsIngestionGoesOnInBothModesAndInstancesHeartbeatAgain() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir.resolve("etcd"))) {
      KafkaCluster kafka = new KafkaCluster(KafkaBroker.shared(), etcd);
      kafka.broker.createTopic(kafka.topic, 1);
      String classicPrefix = "weir-classic-" + UUID.randomUUID().toString().substring(0, 8) + "/";
      long t0 = System.currentTimeMillis() - 600_000;
      AckLedger classicLedger = new AckLedger("etcd-classic", "etcd_outage_classic", 10, t0, 100);
      AckLedger kafkaLedger = new AckLedger("etcd-kafka", "etcd_outage_kafka", 10, t0, 100);
      try (WeirProcess classic = WeirProcess.launch(dir.resolve("classic"), "--target=all",
          "--ingester.id=ingester-classic-0", "--ingester.ring.store=etcd",
          "--ingester.ring.etcd.endpoints=" + etcd.endpoint(), "--ingester.ring.prefix=" + classicPrefix,
          "--ingester.ring.heartbeat-period=1s", "--ingester.ring.instance-addr=127.0.0.1");
          WeirProcess kafkaMode = WeirProcess.launch(dir.resolve("kafka"), kafka.args("--target=all",
              "--ingester.id=ingester-zone-a-0"))) {
        classic.awaitReady(Duration.ofSeconds(90));
        kafkaMode.awaitReady(Duration.ofSeconds(90));
        LedgerWriter classicWriter = new LedgerWriter(classicLedger,
            LedgerWriter.remoteWrite(classic.httpUrl(), Duration.ofSeconds(15)));
        LedgerWriter kafkaWriter = new LedgerWriter(kafkaLedger,
            LedgerWriter.remoteWrite(kafkaMode.httpUrl(), Duration.ofSeconds(15)));
        await().atMost(60, TimeUnit.SECONDS).until(classicWriter::writeNext);
        await().atMost(60, TimeUnit.SECONDS).until(kafkaWriter::writeNext);
        long revisionBefore = maxModRevision(etcd, classicPrefix);
        try (LedgerWriter a = classicWriter.startBackground("etcd-classic", Duration.ofMillis(200));
            LedgerWriter b = kafkaWriter.startBackground("etcd-kafka", Duration.ofMillis(200))) {
          etcd.stop();
          int classicAtStop = classicLedger.ackedWrites();
          int kafkaAtStop = kafkaLedger.ackedWrites();
          Thread.sleep(OUTAGE.toMillis());
          int classicDuring = classicLedger.ackedWrites() - classicAtStop;
          int kafkaDuring = kafkaLedger.ackedWrites() - kafkaAtStop;
          System.out.printf("etcd outage: acked during it classic %d, Kafka mode %d; %s; %s%n", classicDuring,
              kafkaDuring, classicLedger, kafkaLedger);
          assertThat(classic.isAlive()).as("classic exited while etcd was down:%n%s", classic.logTail(40)).isTrue();
          assertThat(kafkaMode.isAlive()).as("kafka mode exited while etcd was down:%n%s", kafkaMode.logTail(40))
              .isTrue();
          // 15 s at one write per 200 ms is ~75 attempts; a third of them acked allows for the first timeouts.
          assertThat(classicDuring).as("classic writes acked during the etcd outage: %s%n%s", classicLedger,
              classic.logTail(30)).isGreaterThan(25);
          assertThat(kafkaDuring).as("Kafka-mode writes acked during the etcd outage: %s%n%s", kafkaLedger,
              kafkaMode.logTail(30)).isGreaterThan(25);

          long restartedAt = System.currentTimeMillis();
          etcd.restart();
          await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
              .untilAsserted(() -> assertThat(heartbeatMillis(classic, "ingester-classic-0"))
                  .as("classic ring heartbeat after etcd returned at %d", restartedAt).isGreaterThan(restartedAt));
          await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
              .untilAsserted(() -> assertThat(heartbeatMillis(kafkaMode, "ingester-zone-a-0"))
                  .as("Kafka-mode ring heartbeat after etcd returned at %d", restartedAt).isGreaterThan(restartedAt));
          await().atMost(30, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() ->
              assertThat(maxModRevision(etcd, classicPrefix)).as("etcd saw the classic instance write again")
                  .isGreaterThan(revisionBefore));
          int classicAfter = classicLedger.ackedWrites();
          await().atMost(30, TimeUnit.SECONDS).until(() -> classicLedger.ackedWrites() > classicAfter + 10);
        }
        BrokerFaultsIT.assertCommittedToTheEnd(kafkaMode, kafka);
        for (var pair : java.util.List.of(java.util.Map.entry(classic, classicLedger),
            java.util.Map.entry(kafkaMode, kafkaLedger))) {
          AckLedger.Report r = pair.getValue().check(new ExportClient(pair.getKey().httpUrl()));
          assertThat(r.ok()).as("%s%n%s%n--- weir log tail ---%n%s", pair.getValue(), r, pair.getKey().logTail(40))
              .isTrue();
        }
      }
    }
  }

  /** The heartbeat timestamp of {@code id} on the process' own ring page (JSON), in ms. */
  static long heartbeatMillis(WeirProcess p, String id) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(p.httpUrl() + "/ingester/ring")).header("Accept", "application/json")
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    for (JsonNode n : JSON.readTree(r.body()).get("instances")) {
      if (n.get("id").asText().equals(id)) {
        long ts = n.get("heartbeat_timestamp").asLong();
        return ts < 100_000_000_000L ? ts * 1000 : ts; // seconds or milliseconds
      }
    }
    throw new AssertionError("instance " + id + " not in the ring: " + r.body());
  }

  /** The highest mod revision of the keys under {@code prefix}, from etcdctl. */
  static long maxModRevision(EtcdServer etcd, String prefix) throws Exception {
    JsonNode n = JSON.readTree(etcd.etcdctl("get", "--prefix", prefix, "--write-out=json"));
    long max = -1;
    for (JsonNode kv : n.path("kvs")) {
      max = Math.max(max, kv.get("mod_revision").asLong());
    }
    return max;
  }
}
