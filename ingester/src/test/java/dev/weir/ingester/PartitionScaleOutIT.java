package dev.weir.ingester;

import static dev.weir.ingester.PartitionDownscaleIT.partitionOnPage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale-out beyond the topic's partition count, on a real broker: ingester {@code -3} against a
 * 2-partition topic raises the count to 4 with {@code --ingest-storage.kafka.auto-increase-partitions-enabled}
 * and consumes what the distributor writes to partition 3; without the flag it stays not ready
 * naming the partition and the topic's count, its partition stays PENDING (so distributors do not
 * write to a partition the topic lacks), and it goes on once an operator raised the count.
 */
class PartitionScaleOutIT {
  @TempDir Path dir;

  @Test
  void ingesterBeyondThePartitionCountRaisesItAndConsumes() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    AckLedger ledger = new AckLedger("scaleout", "scale_out_it", 16, System.currentTimeMillis() - 600_000, 1_000);
    try (WeirProcess ingester = WeirProcess.start(dir.resolve("ingester"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-3", "--ingest-storage.kafka.auto-increase-partitions-enabled=true"))) {
      assertThat(partitionCount(c)).isEqualTo(4);
      PartitionDownscaleIT.awaitStateSeenBy(ingester, 3, "ACTIVE");
      try (WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor"))) {
        PartitionDownscaleIT.awaitStateSeenBy(distributor, 3, "ACTIVE");
        LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(distributor.httpUrl(),
            Duration.ofSeconds(30)));
        assertThat(writer.write(10)).as("%s%n%s", ledger, distributor.logTail(30)).isEqualTo(10);
        await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
          AckLedger.Report r = ledger.check(new ExportClient(ingester.httpUrl()));
          assertThat(r.ok()).as("%s%n%s", ledger, r).isTrue();
        });
      }
    }
    assertThat(partitionCount(c)).as("never lowered, raised once").isEqualTo(4);
  }

  @Test
  void withoutTheFlagTheIngesterWaitsNotReadyAndSaysWhy() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    try (WeirProcess ingester = WeirProcess.launch(dir.resolve("ingester"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-3"))) {
      await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).ignoreExceptions().untilAsserted(() -> {
        HttpResponse<String> ready = ingester.getResponse("/ready");
        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(ready.body()).contains("partition 3 does not exist: topic " + c.topic + " has 2 partitions")
            .contains("auto-increase-partitions-enabled");
      });
      // Several reconciliations (1 s heartbeat, no min owner duration) long, still PENDING.
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(250))
          .untilAsserted(() -> assertThat(partitionOnPage(ingester, 3).get("state").asText()).isEqualTo("PENDING"));
      assertThat(partitionCount(c)).isEqualTo(2);

      try (Admin admin = c.broker.admin()) {
        admin.createPartitions(Map.of(c.topic, NewPartitions.increaseTo(4))).all().get(30, TimeUnit.SECONDS);
      }
      ingester.awaitReady(Duration.ofSeconds(60));
      PartitionDownscaleIT.awaitStateSeenBy(ingester, 3, "ACTIVE");
    }
  }

  static int partitionCount(KafkaCluster c) throws Exception {
    try (Admin admin = c.broker.admin()) {
      return admin.describeTopics(List.of(c.topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(c.topic)
          .partitions().size();
    }
  }
}
