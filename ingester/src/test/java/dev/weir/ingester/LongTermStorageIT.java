package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.BlockWriter;
import java.nio.file.Files;
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
 * heads only); two store-gateways serve the bucket and join the store-gateway ring; a querier
 * reads the ingesters (partition ring in etcd) for the last 4 hours and, found through their ring,
 * the store-gateways for everything. The querier returns every acknowledged sample exactly once,
 * and Prometheus reading it answers PromQL as Prometheus over its own TSDB of the acked samples.
 * Then the store-gateway the querier asked is killed, the ingesters lose their data (stopped, data
 * dirs deleted, restarted at their committed offsets), and the querier returns exactly the samples
 * of the records the block-builder committed, each once, from the other store-gateway.
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

      List<WeirProcess> storeGateways = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        storeGateways.add(startStoreGateway(all, c, bucket, i));
      }
      // No --querier.store-gateway-addresses: the querier finds the store-gateways in their ring.
      // Prometheus 2.42 sends no tenant header on remote read: this querier serves one tenant without it.
      WeirProcess querier = start(all, "querier", c.args("--target=querier", "--querier.query-store-after=0s",
          "--querier.query-ingesters-within=4h", "--auth.multitenancy-enabled=false", "--auth.no-auth-tenant=" + TENANT));
      awaitActivePartitions(querier);
      await().atMost(60, TimeUnit.SECONDS).until(() -> querier.get("/store-gateway/ring")
          .split("<td>ACTIVE</td>", -1).length - 1 == 2);
      ExportClient export = new ExportClient(querier.httpUrl());
      await().atMost(60, TimeUnit.SECONDS).until(() -> ledger.check(export).missing().isEmpty());
      AckLedger.Report report = ledger.check(export);
      assertThat(report.ok()).as("%s", report).isTrue();
      assertThat(report.foundSamples()).isEqualTo((long) (blockWrites + headWrites) * SERIES);
      assertThat(querier.metric("weir_querier_merged_duplicate_samples_total"))
          .as("the hour both kinds answer for holds samples of blocks and heads").isPositive();
      WeirProcess asked = null;
      for (WeirProcess sg : storeGateways) {
        if (sg.metric("weir_bucket_store_bucket_read_bytes_total{file=\"chunks\"}") > 0) {
          asked = sg;
        }
      }
      assertThat(asked).as("one store-gateway from the ring served the blocks").isNotNull();

      assertPromqlLikePrometheusOverItsOwnTsdb(ledger, querier, t0, now - 60_000);

      // The store-gateway the querier asks dies: the other replica answers, nothing is missing.
      asked.kill();

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
      assertThat(querier.metric("weir_querier_source_failovers_total{kind=\"store-gateway\"}"))
          .as("the query moved from the killed store-gateway to the other").isPositive();
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

  /** Store-gateway {@code i} on the bucket, in the cluster's ring, once it serves every block the bucket holds. */
  WeirProcess startStoreGateway(List<WeirProcess> all, KafkaCluster c, Path bucket, int i) throws Exception {
    int blocks = new FilesystemBucket(bucket).list().size();
    assertThat(blocks).as("the block-builder wrote blocks").isGreaterThan(1);
    WeirProcess sg = start(all, "store-gateway-" + i, c.args("--target=store-gateway",
        "--ingester.id=store-gateway-" + i, "--blocks-storage.filesystem.dir=" + bucket,
        "--blocks-storage.bucket-store.sync-dir=" + dir.resolve("sync-" + i),
        "--blocks-storage.bucket-store.sync-interval=1s"));
    assertThat(sg.metric("weir_bucket_store_blocks_loaded")).isEqualTo(blocks);
    return sg;
  }

  /**
   * Prometheus 2.42 reading the querier by remote read answers PromQL exactly as Prometheus over
   * its own TSDB holding the acknowledged samples (backfilled with {@code promtool tsdb
   * create-blocks-from openmetrics}), over a range that spans the bucket's blocks and the heads.
   */
  void assertPromqlLikePrometheusOverItsOwnTsdb(AckLedger ledger, WeirProcess querier, long from, long to)
      throws Exception {
    StringBuilder om = new StringBuilder("# TYPE " + METRIC + " gauge\n");
    List<Long> acked = ledger.acked();
    for (int s = 0; s < SERIES; s++) {
      for (long k : acked) {
        long t = ledger.t0 + k * ledger.stepMs;
        om.append(METRIC).append("{series=\"").append(String.format("%04d", s)).append("\"} ").append(k)
            .append(' ').append(t / 1000).append('\n');
      }
    }
    Path omFile = dir.resolve("acked.om");
    Files.writeString(omFile, om.append("# EOF\n"));
    Path own = dir.resolve("prom-own");
    Promtool.run(dir, Promtool.PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", omFile.toString(),
        own.resolve("data").toString());
    String viaQuerier = "global:\n  scrape_interval: 1m\nremote_read:\n  - url: " + querier.httpUrl()
        + "/api/v1/read\n    read_recent: true\n";
    List<String> queries = List.of(METRIC, "sum(" + METRIC + ")", "rate(" + METRIC + "[5m])",
        "count_over_time(" + METRIC + "[10m])", "max by (series) (" + METRIC + "{series=~\"000.\"})",
        "changes(" + METRIC + "[30m])");
    try (PrometheusProcess a = PrometheusProcess.start(own, PrometheusProcess.reservePort(),
            "global:\n  scrape_interval: 1m\n");
        PrometheusProcess b = PrometheusProcess.start(dir.resolve("prom-querier"), PrometheusProcess.reservePort(),
            viaQuerier)) {
      for (String q : queries) {
        JsonNode theirs = a.queryRange(q, from, to, Duration.ofMinutes(1)).get("data");
        JsonNode response = b.queryRange(q, from, to, Duration.ofMinutes(1));
        JsonNode mine = response.get("data");
        assertThat(response.path("warnings").size()).as("%s: warnings %s; log:\n%s", q, response.path("warnings"),
            b.log()).isZero();
        assertThat(theirs.get("result").size()).as("%s has data in Prometheus' own TSDB", q).isPositive();
        assertThat(firstDifference(theirs.get("result"), mine.get("result"))).as(q).isNull();
        assertThat(mine).as(q).isEqualTo(theirs);
      }
    }
  }

  /** Where two range-query results first differ (series, then point), or null when they are equal. */
  static String firstDifference(JsonNode want, JsonNode got) {
    if (want.size() != got.size()) {
      return want.size() + " series expected, " + got.size() + " found";
    }
    for (int i = 0; i < want.size(); i++) {
      JsonNode w = want.get(i);
      JsonNode g = got.get(i);
      if (!w.get("metric").equals(g.get("metric"))) {
        return "series " + i + ": " + w.get("metric") + " expected, " + g.get("metric") + " found";
      }
      JsonNode wv = w.get("values");
      JsonNode gv = g.get("values");
      for (int j = 0; j < Math.max(wv.size(), gv.size()); j++) {
        if (j >= wv.size() || j >= gv.size() || !wv.get(j).equals(gv.get(j))) {
          return w.get("metric") + " point " + j + ": " + (j < wv.size() ? wv.get(j) : "none") + " expected, "
              + (j < gv.size() ? gv.get(j) : "none") + " found (" + wv.size() + " vs " + gv.size() + " points)";
        }
      }
    }
    return null;
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
