package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.tsdb.block.BlockWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole read path over long-term storage, with real processes: a distributor writes samples
 * hours old into a 2-partition topic; ingester-zone-a-0 and -1 consume it; a block-builder builds
 * the first five hours into a filesystem bucket (then stops, so the rest lives in the ingesters'
 * heads only); a store-gateway serves the bucket; a querier reads the ingesters (partition ring in
 * etcd) for the last 4 hours and the store-gateway for everything. The querier returns every
 * acknowledged sample exactly once. Then the ingesters lose their data (stopped, data dirs
 * deleted, restarted at their committed offsets), and the querier returns exactly the samples of
 * the records the block-builder committed, each once.
 */
class LongTermStorageIT {
  static final long HOUR = 3_600_000L;
  static final long STEP = 60_000;
  static final int SERIES = 20;
  static final String TENANT = "e2e";
  static final String METRIC = "e2e_metric";

  @TempDir Path dir;

  @Test
  void querierReturnsEveryAckedSampleOnceAndTheBlocksAloneOnceTheIngestersLostTheirData() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 2);
    String group = "bb-" + c.topic;
    Path bucket = dir.resolve("bucket");
    long now = System.currentTimeMillis();
    long t0 = now / (2 * HOUR) * (2 * HOUR) - 6 * HOUR; // 6 to 8 hours back, at a block boundary
    int blockWrites = (int) (5 * HOUR / STEP);
    int headWrites = (int) ((now - 60_000 - t0) / STEP) - blockWrites; // up to a minute ago
    AckLedger ledger = new AckLedger(TENANT, METRIC, SERIES, t0, STEP);
    List<WeirProcess> all = new ArrayList<>();
    try {
      List<WeirProcess> ingesters = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        ingesters.add(launch(all, "ingester-" + i, c.args("--target=ingester", "--ingester.id=ingester-zone-a-" + i,
            "--blocks-storage.tsdb.ship-interval=0")));
      }
      for (WeirProcess w : ingesters) {
        w.awaitReady(Duration.ofSeconds(90));
      }
      WeirProcess distributor = start(all, "distributor", c.args("--target=distributor"));
      awaitActivePartitions(distributor);
      WeirProcess builder = start(all, "block-builder", c.args("--target=block-builder",
          "--block-builder.consumer-group=" + group, "--block-builder.partitions=0,1",
          "--blocks-storage.filesystem.dir=" + bucket, "--block-builder.consume-interval=5s",
          "--block-builder.consume-interval-buffer=0s", "--block-builder.lookback-on-no-commit=1h",
          "--ingester.id=block-builder-0"));
      LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(distributor.httpUrl(),
          Duration.ofSeconds(30)));
      assertThat(writer.write(blockWrites)).as("%s", ledger).isEqualTo(blockWrites);
      Map<TopicPartition, Long> built = BlockBuilderIT.ends(c.broker, c.topic, 2);
      await().atMost(3, TimeUnit.MINUTES).until(() -> BlockBuilderIT.committed(c.broker, group).equals(built));
      builder.terminate(Duration.ofSeconds(30));
      assertThat(writer.write(headWrites)).as("%s", ledger).isEqualTo(headWrites);

      WeirProcess storeGateway = startStoreGateway(all, bucket);
      WeirProcess querier = start(all, "querier", c.args("--target=querier",
          "--querier.store-gateway-addresses=" + storeGateway.grpcTarget(), "--querier.query-store-after=0s",
          "--querier.query-ingesters-within=4h"));
      awaitActivePartitions(querier);
      ExportClient export = new ExportClient(querier.httpUrl());
      await().atMost(60, TimeUnit.SECONDS).until(() -> ledger.check(export).missing().isEmpty());
      AckLedger.Report report = ledger.check(export);
      assertThat(report.ok()).as("%s", report).isTrue();
      assertThat(report.foundSamples()).isEqualTo((long) (blockWrites + headWrites) * SERIES);
      assertThat(storeGateway.metric("weir_bucket_store_bucket_read_bytes_total{file=\"chunks\"}")).isPositive();
      assertThat(querier.metric("weir_querier_merged_duplicate_samples_total"))
          .as("the hour both kinds answer for holds samples of blocks and heads").isPositive();

      for (int i = 0; i < 2; i++) {
        ingesters.get(i).terminate(Duration.ofSeconds(60));
        BlockWriter.deleteRecursively(dir.resolve("ingester-" + i).resolve("data"));
      }
      for (WeirProcess w : ingesters) {
        w.restart();
      }
      Map<String, List<String>> committed = committedSamples(c, BlockBuilderIT.committed(c.broker, group));
      assertThat(committed).hasSize(SERIES);
      assertThat(committed.values().stream().mapToInt(List::size).sum()).isEqualTo(blockWrites * SERIES);
      assertThat(flatten(export.export(TENANT, METRIC))).isEqualTo(committed);
      Map<String, Integer> census = BlockBuilderIT.census(new FilesystemBucket(bucket));
      assertThat(census).hasSize(blockWrites * SERIES).allSatisfy((sample, times) -> assertThat(times).isOne());
    } finally {
      for (int i = all.size() - 1; i >= 0; i--) {
        all.get(i).close();
      }
    }
  }

  static WeirProcess launch(List<WeirProcess> all, Path dir, String... args) throws Exception {
    WeirProcess p = WeirProcess.launch(dir, args);
    all.add(p);
    return p;
  }

  WeirProcess launch(List<WeirProcess> all, String name, String... args) throws Exception {
    return launch(all, dir.resolve(name), args);
  }

  WeirProcess start(List<WeirProcess> all, String name, String... args) throws Exception {
    WeirProcess p = launch(all, name, args);
    p.awaitReady(Duration.ofSeconds(90));
    return p;
  }

  /** A store-gateway on the bucket, once it serves every block the bucket holds. */
  WeirProcess startStoreGateway(List<WeirProcess> all, Path bucket) throws Exception {
    int blocks = new FilesystemBucket(bucket).list().size();
    assertThat(blocks).as("the block-builder wrote blocks").isGreaterThan(1);
    WeirProcess sg = start(all, "store-gateway", "--target=store-gateway", "--blocks-storage.filesystem.dir=" + bucket,
        "--blocks-storage.bucket-store.sync-dir=" + dir.resolve("sync"),
        "--blocks-storage.bucket-store.sync-interval=1s");
    assertThat(sg.metric("weir_bucket_store_blocks_loaded")).isEqualTo(blocks);
    return sg;
  }

  static void awaitActivePartitions(WeirProcess p) {
    await().atMost(60, TimeUnit.SECONDS).until(() -> p.get("/ingester/partition-ring")
        .split("<td>ACTIVE</td>", -1).length - 1 == 2);
  }

  /** Samples of the records before the committed offsets, as "ts value" lines per series text. */
  static Map<String, List<String>> committedSamples(KafkaCluster c, Map<TopicPartition, Long> committed)
      throws Exception {
    Map<String, TreeMap<Long, Double>> out = new TreeMap<>();
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.broker.bootstrap());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      for (Map.Entry<TopicPartition, Long> e : committed.entrySet()) {
        consumer.assign(List.of(e.getKey()));
        consumer.seekToBeginning(List.of(e.getKey()));
        while (consumer.position(e.getKey()) < e.getValue()) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
            if (r.offset() < e.getValue()) {
              add(out, WriteRequest.parseFrom(r.value()));
            }
          }
        }
      }
    }
    Map<String, List<String>> lines = new TreeMap<>();
    out.forEach((series, samples) -> lines.put(series, samples.entrySet().stream()
        .map(s -> s.getKey() + " " + s.getValue()).toList()));
    return lines;
  }

  static void add(Map<String, TreeMap<Long, Double>> out, WriteRequest req) {
    for (TimeSeries ts : req.getTimeseriesList()) {
      StringBuilder text = new StringBuilder("{");
      ts.getLabelsList().stream().sorted(Comparator.comparing(Label::getName)).forEach(l -> text
          .append(text.length() > 1 ? "," : "").append(l.getName()).append("=\"").append(l.getValue()).append('"'));
      TreeMap<Long, Double> samples = out.computeIfAbsent(text.append('}').toString(), k -> new TreeMap<>());
      for (Sample s : ts.getSamplesList()) {
        samples.put(s.getTimestamp(), s.getValue());
      }
    }
  }

  static Map<String, List<String>> flatten(Map<String, ExportClient.Series> exported) {
    Map<String, List<String>> out = new TreeMap<>();
    exported.forEach((labels, s) -> {
      List<String> lines = new ArrayList<>();
      for (int i = 0; i < s.timestamps().size(); i++) {
        lines.add(s.timestamps().get(i) + " " + s.values().get(i));
      }
      out.put(labels, lines);
    });
    return out;
  }
}
