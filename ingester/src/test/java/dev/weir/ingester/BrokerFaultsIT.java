package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.testing.Backlog;
import dev.weir.storage.testing.KafkaBroker;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka-mode ingester process against a private KRaft broker that is stopped at the worst
 * moments: before the ingester starts, while it catches up on a backlog, while it follows the head
 * with a distributor writing, and three times in a row while records are produced (alternately a
 * controlled shutdown and a SIGKILL). Every test counts
 * the writes Kafka (or the distributor) acknowledged and reads them back through
 * {@code /api/v1/export}: every acknowledged sample is found, none twice, and the committed offset
 * reaches the end of the partition.
 */
class BrokerFaultsIT {
  static final String TENANT = "broker-faults";
  static final String GROUP = "ingester-zone-a-0";
  static final String COMMITTED = "weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}";
  static final String MISSED = "weir_ingest_storage_reader_missed_records_total{partition=\"0\"}";
  static final String RECORDS = "weir_ingest_storage_reader_records_total{partition=\"0\"}";
  /** Long enough for every client timeout to fire at least once, short enough for a modest suite. */
  static final Duration OUTAGE = Duration.ofSeconds(12);
  /** Broker restarts under load: stopped, killed, stopped (each takes ~10-18 s on 2 vCPUs). */
  static final int RESTARTS = 3;

  @TempDir Path dir;

  static Writer writer(KafkaCluster c) {
    return new Writer(KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "faults-producer"), WriterMetrics.noop());
  }

  static long endOffset(KafkaBroker broker, String topic) throws Exception {
    try (Admin admin = broker.admin()) {
      TopicPartition tp = new TopicPartition(topic, 0);
      return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
    }
  }

  /** Fails with acked vs found counts and the process' log tail unless found ⊇ acked, each once. */
  static void assertEveryAckedSampleFoundOnce(WeirProcess ing, AckLedger ledger) throws Exception {
    AckLedger.Report r = ledger.check(new ExportClient(ing.httpUrl()));
    assertThat(r.ok()).as("%s%n%s%n--- weir log tail ---%n%s", ledger, r, ing.logTail(40)).isTrue();
    assertThat(r.ackedSamples()).as("the test acknowledged something: %s", ledger).isPositive();
  }

  /** Awaits committed offset = end offset of partition 0, then checks it against Kafka's own view. */
  static void assertCommittedToTheEnd(WeirProcess ing, KafkaCluster c) throws Exception {
    long end = endOffset(c.broker, c.topic);
    await().atMost(90, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
        .untilAsserted(() -> assertThat(ing.metric(COMMITTED)).as("committed offset vs end offset %d; %s", end,
            ing.metricLines("reader_")).isEqualTo((double) end));
    await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> assertThat(c.broker.describeGroup(GROUP))
        .containsPattern("\\s" + end + "\\s+" + end + "\\s+0\\s"));
    assertThat(ing.metric(MISSED)).as("missed records; %s", ing.metricLines("reader_")).isZero();
  }

  @Test
  void brokerDownAtStartUpKeepsTheIngesterAliveAndUnreadyThenItCatchesUpOnEveryRecord() throws Exception {
    try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
      KafkaCluster c = new KafkaCluster(broker, EtcdServer.shared());
      broker.createTopic(c.topic, 1);
      AckLedger ledger = new AckLedger(TENANT, "broker_down_at_startup", 20, System.currentTimeMillis() - 600_000,
          1_000);
      try (Writer w = writer(c)) {
        assertThat(new LedgerWriter(ledger, LedgerWriter.kafka(w)).write(20)).isEqualTo(20);
      }
      broker.stop();
      try (WeirProcess ing = WeirProcess.launch(dir.resolve("i"), c.args("--target=ingester",
          "--ingester.id=" + GROUP))) {
        long until = System.nanoTime() + OUTAGE.toNanos();
        HttpResponse<String> lastReady = null;
        while (System.nanoTime() < until) {
          assertThat(ing.isAlive()).as("weir exited while the broker was down:%n%s", ing.logTail(40)).isTrue();
          try {
            lastReady = ing.getResponse("/ready");
            assertThat(lastReady.statusCode()).as("/ready while the broker is down: %s", lastReady.body())
                .isEqualTo(503);
          } catch (java.io.IOException notListeningYet) {
            // the HTTP server may come up late; the assertion after the loop needs one answer
          }
          Thread.sleep(500);
        }
        assertThat(lastReady).as("/ready never answered during a %s broker outage:%n%s", OUTAGE, ing.logTail(40))
            .isNotNull();
        assertThat(lastReady.body()).as("the not-ready reason names Kafka or the partition")
            .containsAnyOf("Kafka", "kafka", "partition");

        broker.restart();
        try (Writer w = writer(c)) {
          assertThat(new LedgerWriter(ledger, LedgerWriter.kafka(w)).write(20)).isEqualTo(20);
        }
        ing.awaitReady(Duration.ofSeconds(120));
        assertCommittedToTheEnd(ing, c);
        assertEveryAckedSampleFoundOnce(ing, ledger);
      }
    }
  }

  @Test
  void brokerStoppedDuringCatchUpLosesNoRecord() throws Exception {
    try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
      KafkaCluster c = new KafkaCluster(broker, EtcdServer.shared());
      broker.createTopic(c.topic, 1);
      // 600 records of 1,000 series: a backlog that takes seconds to replay on a shared 2-core host.
      AckLedger ledger = new AckLedger(TENANT, "broker_catch_up", 1_000, System.currentTimeMillis() - 3_600_000, 1_000);
      produceBacklog(broker, c.topic, ledger, 600);
      try (WeirProcess ing = WeirProcess.launch(dir.resolve("i"), c.args("--target=ingester",
          "--ingester.id=" + GROUP))) {
        await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
            .until(() -> ing.metric(RECORDS) > 0);
        HttpResponse<String> ready = ing.getResponse("/ready");
        broker.stop();
        assertThat(ready.statusCode()).as("still catching up when the broker stopped (else the backlog is too"
            + " small to test this): %s; %s", ready.body(), ing.metricLines("reader_records")).isEqualTo(503);
        Thread.sleep(10_000);
        assertThat(ing.isAlive()).as("weir exited while the broker was down:%n%s", ing.logTail(40)).isTrue();
        broker.restart();
        ing.awaitReady(Duration.ofSeconds(120));
        assertCommittedToTheEnd(ing, c);
        assertEveryAckedSampleFoundOnce(ing, ledger);
      }
    }
  }

  /** Produces {@code n} writes of the ledger asynchronously; each is acked when Kafka acked it. */
  static void produceBacklog(KafkaBroker broker, String topic, AckLedger ledger, int n) throws Exception {
    try (KafkaProducer<byte[], byte[]> p = Backlog.producer(broker.bootstrap())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      List<Long> ks = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        long k = ledger.attempt();
        ks.add(k);
        acks.add(p.send(Backlog.record(topic, 0, ledger.t0 + k * ledger.stepMs, ledger.tenant, ledger.request(k))));
      }
      for (int i = 0; i < n; i++) {
        acks.get(i).get(60, TimeUnit.SECONDS);
        ledger.ack(ks.get(i));
      }
    }
  }

  @Test
  void brokerStoppedAtTheHeadLosesNoAcknowledgedWrite() throws Exception {
    try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
      KafkaCluster c = new KafkaCluster(broker, EtcdServer.shared());
      broker.createTopic(c.topic, 1);
      AckLedger ledger = new AckLedger(TENANT, "broker_at_head", 10, System.currentTimeMillis() - 600_000, 100);
      // target=all: the same process is the distributor (push → Kafka) and the ingester of partition 0.
      try (WeirProcess weir = WeirProcess.start(dir.resolve("all"), c.args("--target=all",
          "--ingester.id=" + GROUP))) {
        LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(weir.httpUrl(),
            Duration.ofSeconds(20)));
        await().atMost(60, TimeUnit.SECONDS).until(writer::writeNext);
        try (LedgerWriter bg = writer.startBackground("head", Duration.ofMillis(100))) {
          await().atMost(30, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= 20);
          broker.stop();
          int ackedAtStop = ledger.ackedWrites();
          Thread.sleep(OUTAGE.toMillis());
          assertThat(weir.isAlive()).as("weir exited while the broker was down:%n%s", weir.logTail(40)).isTrue();
          int ackedDuringOutage = ledger.ackedWrites() - ackedAtStop;
          broker.restart();
          int ackedAtRestart = ledger.ackedWrites();
          await().atMost(90, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= ackedAtRestart + 20);
          System.out.printf("at the head: %d writes acked during the %s outage; %s%n", ackedDuringOutage, OUTAGE,
              ledger);
        }
        assertCommittedToTheEnd(weir, c);
        assertEveryAckedSampleFoundOnce(weir, ledger);
        assertThat(ledger.refusals().keySet()).as("refusals while the broker was down are 5xx, never 4xx: %s",
            ledger).noneMatch(k -> k.startsWith("http 4"));
      }
    }
  }

  @Test
  void brokerRestartsWhileProducingLoseNothing() throws Exception {
    long started = System.nanoTime();
    try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
      KafkaCluster c = new KafkaCluster(broker, EtcdServer.shared());
      broker.createTopic(c.topic, 1);
      AckLedger ledger = new AckLedger(TENANT, "broker_restart_loop", 50, System.currentTimeMillis() - 600_000, 100);
      try (WeirProcess ing = WeirProcess.start(dir.resolve("i"), c.args("--target=ingester",
          "--ingester.id=" + GROUP));
          Writer w = writer(c)) {
        try (LedgerWriter bg = new LedgerWriter(ledger, LedgerWriter.kafka(w))
            .startBackground("restart-loop", Duration.ofMillis(50))) {
          for (int restart = 1; restart <= RESTARTS; restart++) {
            Thread.sleep(1_500);
            if (restart % 2 == 0) {
              broker.kill(); // a crash, not a controlled shutdown, every other time
            } else {
              broker.stop();
            }
            Thread.sleep(1_000);
            assertThat(ing.isAlive()).as("weir exited at broker stop %d:%n%s", restart, ing.logTail(40)).isTrue();
            broker.restart();
            System.out.printf("restart loop: broker back %d at %d ms%n", restart,
                (System.nanoTime() - started) / 1_000_000);
          }
          int acked = ledger.ackedWrites();
          await().atMost(60, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= acked + 10);
        }
        System.out.printf("restart loop: %s%n", ledger);
        assertCommittedToTheEnd(ing, c);
        assertEveryAckedSampleFoundOnce(ing, ledger);
      }
    }
  }
}
