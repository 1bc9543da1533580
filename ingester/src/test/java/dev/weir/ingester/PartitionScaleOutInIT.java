package dev.weir.ingester;

import static dev.weir.ingester.PartitionDownscaleIT.JSON;
import static dev.weir.ingester.PartitionDownscaleIT.awaitStateSeenBy;
import static dev.weir.ingester.PartitionDownscaleIT.partitionIds;
import static dev.weir.ingester.PartitionDownscaleIT.partitionOnPage;
import static dev.weir.ingester.PartitionDownscaleIT.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale-out 3 → 5 partitions and scale-in 5 → 3 under continuous writes through a distributor, all
 * real processes (Kafka, etcd, ingesters, distributor, querier, store-gateway over a filesystem
 * bucket):
 *
 * <ul>
 *   <li>ingesters 3 and 4 raise the 3-partition topic to 5 and their partitions turn ACTIVE and
 *       take writes;
 *   <li>after POST prepare-partition-downscale (on one owner each), nothing is produced to 3 and 4
 *       any more: their end offsets, read when every process saw them INACTIVE, never grow;
 *   <li>their ingesters say {@code ready_to_leave: false} until their blocks are in the bucket and
 *       the (5 s) look-back passed, and the bucket holds their blocks before they are stopped;
 *   <li>once they are gone and the partitions removed from the ring, every acknowledged sample is
 *       returned by the querier (ingesters 0-2 for their partitions, the store-gateway, found in
 *       its etcd ring, for what partitions 3 and 4 held).
 * </ul>
 */
class PartitionScaleOutInIT {
  @TempDir Path dir;

  @Test
  void scaleOutAndInUnderWritesLosesNoAckedSample() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 3);
    Path bucket = dir.resolve("bucket");
    // One write per 100 ms, 100 ms apart in sample time: the samples stay 10 minutes in the past.
    AckLedger ledger = new AckLedger("scale", "scale_out_in_it", 32, System.currentTimeMillis() - 600_000, 100);
    List<WeirProcess> all = new ArrayList<>();
    try {
      List<WeirProcess> ingesters = new ArrayList<>();
      for (int p = 0; p < 3; p++) {
        ingesters.add(ingester(c, bucket, p));
      }
      all.addAll(ingesters);
      for (WeirProcess w : ingesters) {
        w.awaitReady(Duration.ofSeconds(120));
      }
      WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor"));
      all.add(distributor);
      WeirProcess storeGateway = WeirProcess.start(dir.resolve("store-gateway"), c.args("--target=store-gateway",
          "--blocks-storage.filesystem.dir=" + bucket, "--blocks-storage.bucket-store.sync-interval=1s",
          "--blocks-storage.bucket-store.sync-dir=" + dir.resolve("sg-sync")));
      all.add(storeGateway);
      // Store-gateways for everything older than 1 s, ingesters for the last 13 h (default).
      WeirProcess querier = WeirProcess.start(dir.resolve("querier"), c.args("--target=querier",
          "--querier.query-store-after=1s"));
      all.add(querier);
      for (int p = 0; p < 3; p++) {
        awaitStateSeenBy(distributor, p, "ACTIVE");
      }
      Map<Integer, Long> inactiveAt;

      try (LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(distributor.httpUrl(),
          Duration.ofSeconds(30))).startBackground("scale", Duration.ofMillis(100))) {
        await().atMost(30, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= 10);

        // Scale-out: 3 → 5.
        List<WeirProcess> added = List.of(ingester(c, bucket, 3), ingester(c, bucket, 4));
        all.addAll(added);
        for (WeirProcess w : added) {
          w.awaitReady(Duration.ofSeconds(120));
        }
        assertThat(PartitionScaleOutIT.partitionCount(c)).isEqualTo(5);
        awaitStateSeenBy(distributor, 3, "ACTIVE");
        awaitStateSeenBy(distributor, 4, "ACTIVE");
        Map<Integer, Long> activeAt = endOffsets(c);
        await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> {
          Map<Integer, Long> now = endOffsets(c);
          assertThat(now.get(3)).as("partition 3 takes writes").isGreaterThan(activeAt.get(3));
          assertThat(now.get(4)).as("partition 4 takes writes").isGreaterThan(activeAt.get(4));
        });

        // Scale-in: 5 → 3. One POST per partition (one owner each; one zone here).
        for (WeirProcess w : added) {
          HttpResponse<String> post = send(w, "POST");
          assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
          JsonNode r = JSON.readTree(post.body());
          assertThat(r.get("ready_to_leave").asBoolean()).as("not before its data is in the bucket").isFalse();
          assertThat(r.get("all_owners_ready_to_leave").asBoolean()).isFalse();
        }
        for (WeirProcess w : List.of(distributor, querier)) {
          awaitStateSeenBy(w, 3, "INACTIVE");
          awaitStateSeenBy(w, 4, "INACTIVE");
        }
        // Records acknowledged before the distributor saw the switch are in; nothing after it.
        inactiveAt = endOffsets(c);
        long ackedAtSwitch = ledger.ackedWrites();
        await().atMost(30, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= ackedAtSwitch + 20);

        for (WeirProcess w : added) {
          int partition = added.indexOf(w) + 3;
          await().atMost(30, TimeUnit.SECONDS).untilAsserted(() ->
              assertThat(partitionOnPage(w, partition).get("lag_records").asLong()).isZero());
          JsonNode notYet = JSON.readTree(send(w, "GET").body());
          assertThat(notYet.get("ready_to_leave").asBoolean()).as(notYet.toString()).isFalse();
          assertThat(notYet.get("reasons").toString()).contains("head holds");
          HttpResponse<String> flushed = PartitionDownscaleIT.HTTP.send(HttpRequest.newBuilder(
              URI.create(w.httpUrl() + "/ingester/flush")).POST(HttpRequest.BodyPublishers.noBody()).build(),
              HttpResponse.BodyHandlers.ofString());
          assertThat(flushed.statusCode()).as(flushed.body()).isEqualTo(200);
        }
        for (WeirProcess w : added) {
          await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode r = JSON.readTree(send(w, "GET").body());
            assertThat(r.get("all_owners_ready_to_leave").asBoolean()).as(r.toString()).isTrue();
          });
        }
        assertThat(blocksIn(bucket, ledger.tenant)).as("shipped before the ingesters may go").isPositive();
        for (WeirProcess w : added) {
          assertThat(w.terminate(Duration.ofSeconds(30))).isIn(0, 143);
        }
        await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
          assertThat(partitionIds(distributor)).containsExactly(0, 1, 2);
          assertThat(partitionIds(querier)).containsExactly(0, 1, 2);
        });
        long ackedAtRemoval = ledger.ackedWrites();
        await().atMost(30, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= ackedAtRemoval + 10);
      }
      Map<Integer, Long> end = endOffsets(c);
      assertThat(end.get(3)).as("nothing written to partition 3 after it turned INACTIVE")
          .isEqualTo(inactiveAt.get(3));
      assertThat(end.get(4)).as("nothing written to partition 4 after it turned INACTIVE")
          .isEqualTo(inactiveAt.get(4));

      ExportClient export = new ExportClient(querier.httpUrl());
      await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
        AckLedger.Report r = ledger.check(export);
        assertThat(r.ok()).as("%s%n%s", ledger, r).isTrue();
      });
      assertThat(storeGateway.metric("weir_bucket_store_blocks_loaded")).isPositive();
    } finally {
      for (WeirProcess w : all) {
        w.close();
      }
    }
  }

  private WeirProcess ingester(KafkaCluster c, Path bucket, int partition) throws Exception {
    return WeirProcess.launch(dir.resolve("ingester-" + partition), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-" + partition, "--ingest-storage.kafka.auto-increase-partitions-enabled=true",
        "--ingester.partition-ring.delete-inactive-partition-after=2s",
        // Scale-in readiness within the test: a 5 s look-back, blocks shipped every second.
        "--querier.query-ingesters-within=5s", "--querier.query-store-after=1s",
        "--blocks-storage.tsdb.ship-interval=1s", "--blocks-storage.filesystem.dir=" + bucket));
  }

  private static long blocksIn(Path bucket, String tenant) throws Exception {
    Path t = bucket.resolve(tenant);
    if (!Files.isDirectory(t)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(t)) {
      return s.filter(p -> Files.exists(p.resolve("meta.json"))).count();
    }
  }

  private static Map<Integer, Long> endOffsets(KafkaCluster c) throws Exception {
    return PartitionDownscaleIT.endOffsets(c, 5);
  }
}
