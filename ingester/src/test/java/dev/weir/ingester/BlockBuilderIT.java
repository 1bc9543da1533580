package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.WeirProcess;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.Backlog;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block-builder binary against the real broker: a backlog of hours becomes blocks that
 * promtool reads back exactly, and kill -9 during flushes and uploads neither loses nor duplicates
 * a sample in the bucket.
 */
class BlockBuilderIT {
  static final long HOUR = 3_600_000L;
  @TempDir Path dir;

  String[] args(KafkaBroker broker, String topic, String group, Path bucket, String partitions) {
    return new String[] {"--target=block-builder", "--ingest-storage.enabled=true",
        "--ingest-storage.kafka.address=" + broker.bootstrap(), "--ingest-storage.kafka.topic=" + topic,
        "--ingest-storage.kafka.auto-create-topic-enabled=false", "--block-builder.consumer-group=" + group,
        "--block-builder.partitions=" + partitions, "--blocks-storage.filesystem.dir=" + bucket,
        "--block-builder.consume-interval=1h", "--block-builder.consume-interval-buffer=0s",
        "--block-builder.lookback-on-no-commit=48h", "--ingester.id=block-builder-0"};
  }

  static Map<TopicPartition, Long> committed(KafkaBroker broker, String group) throws Exception {
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> m = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS);
      Map<TopicPartition, Long> out = new HashMap<>();
      m.forEach((tp, om) -> out.put(tp, om.offset()));
      return out;
    }
  }

  static Map<TopicPartition, Long> ends(KafkaBroker broker, String topic, int partitions) throws Exception {
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetSpec> q = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        q.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> out = new HashMap<>();
      admin.listOffsets(q).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    }
  }

  @Test
  void hoursOfBacklogOverTwoPartitionsBecomeBlocksThatPromtoolDumpsExactly() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "bb-" + UUID.randomUUID();
    String group = "bb-" + UUID.randomUUID();
    broker.createTopic(topic, 2);
    long from = (System.currentTimeMillis() / HOUR - 7) * HOUR + 17 * 60_000; // not aligned to the hour
    Backlog backlog = new Backlog(broker.bootstrap());
    backlog.produce(topic, 0, "tenant-a", 50, from, from + 5 * HOUR, 30_000);
    backlog.produce(topic, 1, "tenant-a", 50, from + HOUR, from + 6 * HOUR, 30_000);
    backlog.produce(topic, 1, "tenant-b", 20, from, from + 4 * HOUR, 60_000);
    Path bucket = dir.resolve("bucket");
    Map<TopicPartition, Long> ends = ends(broker, topic, 2);
    String[] args = Stream.concat(Stream.of(args(broker, topic, group, bucket, "0,1")),
        Stream.of("--log.progress-interval=0")).toArray(String[]::new);   // a progress line per record
    try (WeirProcess bb = WeirProcess.start(dir.resolve("bb"), args)) {
      await().atMost(3, TimeUnit.MINUTES).until(() -> committed(broker, group).equals(ends));
      assertThat(bb.metric("weir_block_builder_lag_records{partition=\"0\"}")).isZero();
      assertThat(bb.metric("weir_block_builder_lag_records{partition=\"1\"}")).isZero();
      assertThat(bb.metric("weir_block_builder_cycles_total{partition=\"0\"}")).isGreaterThanOrEqualTo(5);
      assertThat(bb.get("/ready")).contains("ready");
      // Every cycle logged its progress: records done out of the partition's backlog.
      assertThat(bb.log()).contains("msg=\"block-builder cycle starting\" partition=0")
          .contains("msg=\"block-builder cycle done\" partition=1")
          .containsPattern("msg=\"block-builder cycle progress\" partition=1 done=\\d+ total=\\d+ unit=records"
              + " percent=\\d+\\.\\d rate_per_s=(\\d+|unknown) eta_s=(\\d+|unknown)");
    }
    for (String tenant : List.of("tenant-a", "tenant-b")) {
      Map<String, List<String>> dumped = Promtool.dump(bucket.resolve(tenant), dir.resolve("dump-" + tenant));
      Map<String, List<String>> expected = backlog.expected.get(tenant);
      assertThat(dumped.keySet()).isEqualTo(expected.keySet());
      for (String series : expected.keySet()) {
        assertThat(dumped.get(series)).as("%s %s", tenant, series).isEqualTo(expected.get(series));
      }
    }
    String described = broker.describeGroup(group);
    assertThat(described).containsPattern(topic + "\\s+0\\s+" + ends.get(new TopicPartition(topic, 0)) + "\\s+"
        + ends.get(new TopicPartition(topic, 0)) + "\\s+0");
    assertThat(census(new FilesystemBucket(bucket)).values().stream().allMatch(c -> c == 1)).isTrue();
  }

  /** Every sample in every block of the bucket, counted: "tenant series ts" → times seen. */
  static Map<String, Integer> census(FilesystemBucket bucket) throws Exception {
    Map<String, Integer> out = new HashMap<>();
    for (Bucket.BlockRef r : bucket.list()) {
      Block b = Block.open(bucket.root().resolve(r.tenant()).resolve(r.id()));
      for (SeriesChunks s : b.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+")))) {
        SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
        String key = r.tenant() + " " + Promtool.key(s.labels()) + " ";
        for (int i = 0; i < samples.size(); i++) {
          out.merge(key + Promtool.format(samples.values()[i]) + " " + samples.timestamps()[i], 1, Integer::sum);
        }
      }
    }
    return out;
  }

  static boolean anyNamed(Path root, String prefix) throws Exception {
    if (!Files.exists(root)) {
      return false;
    }
    try (Stream<Path> s = Files.walk(root)) {
      return s.anyMatch(p -> p.getFileName().toString().startsWith(prefix)
          || p.getFileName().toString().endsWith(prefix));
    }
  }

  @Test
  void killNineDuringFlushesAndUploadsLosesAndDuplicatesNothing() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "bbk-" + UUID.randomUUID();
    String group = "bbk-" + UUID.randomUUID();
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 12) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    for (String tenant : List.of("t1", "t2", "t3")) {
      backlog.produce(topic, 0, tenant, 1_000, from, from + 10 * HOUR, 60_000);
    }
    long end = ends(broker, topic, 1).get(new TopicPartition(topic, 0));
    Path bucket = dir.resolve("bucket");
    Path data = dir.resolve("bb");
    String[] args = args(broker, topic, group, bucket, "0");
    List<String> landed = new ArrayList<>();
    int uploadsSeen = 0;
    int flushesSeen = 0;
    for (int k = 0; k < 6; k++) {
      WeirProcess bb = WeirProcess.launch(data, args);
      try {
        boolean upload = k % 2 == 1;
        String marker = upload ? "uploading block" : "flushing cycle";
        // Kill at the 1st, 2nd or 3rd occurrence in this run, so cycles also commit between kills.
        int target = count(bb.log(), marker) + 1 + k % 3;
        await().atMost(2, TimeUnit.MINUTES).pollInterval(java.time.Duration.ofMillis(2))
            .until(() -> count(bb.log(), marker) >= target);
        bb.kill();
        boolean partialUpload = anyNamed(bucket, ".upload-");
        boolean partialStaging = anyNamed(data.resolve("data/block-builder-staging"), ".tmp");
        if (upload && partialUpload) {
          uploadsSeen++;
        }
        if (!upload && (partialStaging || anyNamed(data.resolve("data/block-builder-staging"), "chunks"))) {
          flushesSeen++;
        }
        landed.add("kill " + k + " after \"" + marker + "\": committed=" + committed(broker, group)
            + " partial_upload=" + partialUpload + " staging_left=" + partialStaging);
      } finally {
        bb.close();
      }
    }
    landed.forEach(System.out::println);
    try (WeirProcess bb = WeirProcess.start(data, args)) {
      await().atMost(3, TimeUnit.MINUTES).until(() -> committed(broker, group)
          .getOrDefault(new TopicPartition(topic, 0), -1L) == end);
    }
    FilesystemBucket fs = new FilesystemBucket(bucket);
    assertThat(fs.listIncomplete()).isEmpty();
    Map<String, Integer> census = census(fs);
    Map<String, Integer> expected = new TreeMap<>();
    backlog.expected.forEach((tenant, series) -> series.forEach((s, lines) -> lines.forEach(l ->
        expected.put(tenant + " " + s + " " + l, 1))));
    assertThat(census.size()).isEqualTo(expected.size());
    assertThat(new TreeMap<>(census)).isEqualTo(expected);
    // The kills did land inside flushes and uploads (not only between cycles).
    assertThat(flushesSeen + uploadsSeen).as("kills that left a partial flush or upload: %s", landed).isPositive();
  }

  static int count(String text, String needle) {
    int n = 0;
    for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
      n++;
    }
    return n;
  }
}
