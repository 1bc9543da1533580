package dev.weir.storage.blockbuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.ingest.batch.BatchConfig;
import dev.weir.storage.ingest.batch.BatchMetrics;
import dev.weir.storage.ingest.batch.BatchSink;
import dev.weir.storage.ingest.batch.BatchingConsumer;
import dev.weir.storage.ingest.batch.SinkException;
import dev.weir.storage.testing.Backlog;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block-builder (batching consumer + block sink + filesystem bucket) under real faults: a
 * broker down at start and stopped mid-cycle, a topic deleted and re-created, a backlog larger than
 * the per-cycle bound, a stop while flushing. Every test counts the samples produced against the
 * samples found in the bucket's blocks.
 */
class BlockBuilderFaultsIT {
  static final long HOUR = 3_600_000L;
  static KafkaBroker privateBroker;

  @TempDir Path dir;
  String topic;
  String group;
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final List<BatchingConsumer> consumers = new ArrayList<>();
  FilesystemBucket bucket;

  @BeforeAll
  static void startPrivateBroker() throws Exception {
    privateBroker = KafkaBroker.start(Files.createTempDirectory("weir-kafka-bb-faults"));
  }

  @AfterAll
  static void stopPrivateBroker() {
    privateBroker.close();
  }

  @BeforeEach
  void setUp() throws Exception {
    topic = "bbf-" + UUID.randomUUID();
    group = "g-" + UUID.randomUUID();
    bucket = new FilesystemBucket(dir.resolve("bucket"));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (BatchingConsumer c : consumers) {
      c.close();
    }
  }

  BatchConfig config(KafkaBroker broker) {
    return BatchConfig.defaults(broker.bootstrap(), topic, group, List.of(0))
        .withInterval(Duration.ofHours(1), Duration.ZERO).withLookback(Duration.ofDays(2));
  }

  BlockBuilderSink sink() {
    return new BlockBuilderSink(bucket, dir.resolve("staging"), 2 * HOUR, topic, registry);
  }

  BatchingConsumer start(BatchConfig config, BatchSink sink) {
    BatchingConsumer c = new BatchingConsumer(config, sink, new BatchMetrics(registry, "block.builder"),
        System::currentTimeMillis);
    consumers.add(c);
    c.start();
    return c;
  }

  static long committed(KafkaBroker broker, String group, String topic) {
    try (Admin admin = broker.admin()) {
      OffsetAndMetadata om = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
          .get(10, TimeUnit.SECONDS).get(new TopicPartition(topic, 0));
      return om == null ? -1 : om.offset();
    } catch (Exception e) {
      return -2; // broker down
    }
  }

  double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  /** Every sample of every block in the bucket: tenant → series → "value timestamp", in time order. */
  Map<String, Map<String, List<String>>> found() throws Exception {
    Map<String, Map<String, List<String>>> out = new TreeMap<>();
    for (Bucket.BlockRef r : bucket.list()) {
      Block b = Block.open(bucket.root().resolve(r.tenant()).resolve(r.id()));
      for (SeriesChunks s : b.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+")))) {
        SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
        for (int i = 0; i < samples.size(); i++) {
          out.computeIfAbsent(r.tenant(), k -> new TreeMap<>()).computeIfAbsent(Promtool.key(s.labels()),
              k -> new ArrayList<>()).add(Promtool.format(samples.values()[i]) + " " + samples.timestamps()[i]);
        }
      }
    }
    // Blocks of one series may come in any order: sort each series' samples by time (duplicates stay).
    out.values().forEach(series -> series.values().forEach(l -> l.sort((a, b) -> Long.compare(
        Long.parseLong(a.substring(a.indexOf(' ') + 1)), Long.parseLong(b.substring(b.indexOf(' ') + 1))))));
    return out;
  }

  static long count(Map<String, Map<String, List<String>>> samples) {
    return samples.values().stream().flatMap(m -> m.values().stream()).mapToLong(List::size).sum();
  }

  /** Something a test does before a batch flushes; it may block or throw. */
  interface FlushHook {
    void run() throws InterruptedException;
  }

  /** {@code real}, with {@code hook} run before each batch's flush. */
  private static BatchSink beforeFlush(BlockBuilderSink real, FlushHook hook) {
    return (partition, start, firstTs) -> {
      BatchSink.Batch b = real.begin(partition, start, firstTs);
      return new BatchSink.Batch() {
        @Override
        public void add(String tenant, WriteRequest request, long offset, long recordTimestamp) {
          b.add(tenant, request, offset, recordTimestamp);
        }

        @Override
        public void flush(long endOffset) throws SinkException {
          try {
            hook.run();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
          b.flush(endOffset);
        }

        @Override
        public void close() {
          b.close();
        }
      };
    };
  }

  @Test
  void startingWhileTheBrokerIsDownIsNotReadyThenBuildsEverySampleOnce() throws Exception {
    KafkaBroker broker = privateBroker;
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 4) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int n = backlog.produce(topic, 0, "tenant-a", 3, from, from + 3 * HOUR, 60_000);
    broker.stop();
    BatchingConsumer c;
    try {
      c = start(config(broker), sink());
      await().atMost(60, TimeUnit.SECONDS).until(() -> c.notReadyReason() != null);
      assertThat(c.notReadyReason()).contains("Kafka not reachable");
      assertThat(gauge("weir.block.builder.kafka.unavailable")).isEqualTo(1);
      assertThat(c.running()).isTrue();
    } finally {
      broker.restart();
    }
    await().atMost(120, TimeUnit.SECONDS).until(() -> committed(broker, group, topic) == n);
    assertThat(found()).isEqualTo(backlog.expected);
    assertThat(count(found())).isEqualTo(3L * n);
    await().atMost(30, TimeUnit.SECONDS).until(() -> c.notReadyReason() == null);
    assertThat(gauge("weir.block.builder.kafka.unavailable")).isZero();
  }

  @Test
  void aBrokerStoppedDuringACycleIsRetriedUntilItReturnsAndLosesNothing() throws Exception {
    KafkaBroker broker = privateBroker;
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 4) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int n = backlog.produce(topic, 0, "tenant-a", 3, from, from + 3 * HOUR, 60_000);
    BlockBuilderSink real = sink();
    AtomicBoolean stoppedOnce = new AtomicBoolean();
    // The first flush stops the broker before it writes: the commit, and the next cycles' offset
    // and fetch requests, meet a broker that is gone.
    BatchSink stopping = beforeFlush(real, () -> {
      if (stoppedOnce.compareAndSet(false, true)) {
        broker.stop();
      }
    });
    BatchingConsumer c = start(config(broker), stopping);
    try {
      await().atMost(60, TimeUnit.SECONDS).until(() -> c.notReadyReason() != null);
      assertThat(c.notReadyReason()).containsAnyOf("offset commit failing", "Kafka not reachable");
    } finally {
      broker.restart();
    }
    await().atMost(120, TimeUnit.SECONDS).until(() -> committed(broker, group, topic) == n);
    assertThat(found()).isEqualTo(backlog.expected);
    await().atMost(30, TimeUnit.SECONDS).until(() -> c.notReadyReason() == null);
    assertThat(registry.get("weir.block.builder.offset.commit.failures").counter().count()).isPositive();
  }

  @Test
  void aDeletedTopicIsReportedAndAReCreatedOneIsBuiltFromItsStartKeepingTheOldBlocks() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 10) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int old = backlog.produce(topic, 0, "tenant-a", 2, from, from + 3 * HOUR, 60_000);
    BatchingConsumer c = start(config(broker), sink());
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(broker, group, topic) == old);

    try (Admin admin = broker.admin()) {
      admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
    }
    await().atMost(60, TimeUnit.SECONDS).until(() -> String.valueOf(c.notReadyReason()).contains("topic " + topic
        + " does not exist"));
    assertThat(gauge("weir.block.builder.topic.missing")).isEqualTo(1);
    c.close();

    broker.createTopic(topic, 1);
    // The commit of a cycle of the old topic that lands after the re-creation (or offsets kept
    // across it): the committed offset is above the new topic's end.
    try (Admin admin = broker.admin()) {
      admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(old)))
          .all().get(30, TimeUnit.SECONDS);
    }
    int fresh = backlog.produce(topic, 0, "tenant-a", 2, from + 5 * HOUR, from + 7 * HOUR, 120_000);
    assertThat(fresh).isLessThan(old);
    BatchingConsumer c2 = start(config(broker), sink());
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed(broker, group, topic) == fresh);
    // Old blocks kept, the new topic's samples all there, nothing twice.
    assertThat(found()).isEqualTo(backlog.expected);
    assertThat(registry.get("weir.block.builder.offset.reset").tag("reason", "after_end").counter().count())
        .isEqualTo(1);
    assertThat(c2.notReadyReason()).isNull();
  }

  @Test
  void aBacklogLargerThanTheCycleBoundIsBuiltExactlyWithoutEverHoldingMoreThanTheBound() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 3) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    // Two hours of 20 series a minute: ~120 records of ~1.3 KB; the bound holds ~12 of them.
    int n = backlog.produce(topic, 0, "tenant-a", 20, from, from + 2 * HOUR, 60_000);
    long bound = 16_000;
    List<Double> sampled = Collections.synchronizedList(new ArrayList<>());
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    CountDownLatch firstSample = new CountDownLatch(1);
    sampler.scheduleAtFixedRate(() -> {
      registry.find("weir.block.builder.cycle.buffered.bytes").gauges().forEach(g -> sampled.add(g.value()));
      firstSample.countDown();
    }, 0, 1, TimeUnit.MILLISECONDS);
    try {
      firstSample.await(10, TimeUnit.SECONDS);
      start(config(broker).withLimits(0, bound, Duration.ofMinutes(1)), sink());
      await().atMost(120, TimeUnit.SECONDS).until(() -> committed(broker, group, topic) == n);
    } finally {
      sampler.shutdownNow();
    }
    assertThat(found()).isEqualTo(backlog.expected);
    assertThat(sampled).isNotEmpty().allMatch(v -> v <= bound);
    assertThat(sampled.stream().mapToDouble(Double::doubleValue).max().orElse(0)).isGreaterThan(bound / 2.0);
    // More cycles than hours: the bound, not the span, ended most of them.
    assertThat(registry.get("weir.block.builder.cycles").counter().count()).isGreaterThan(5);
  }

  @Test
  void stopWhileFlushingCommitsTheFlushedCycle() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    broker.createTopic(topic, 1);
    long from = (System.currentTimeMillis() / HOUR - 3) * HOUR;
    Backlog backlog = new Backlog(broker.bootstrap());
    int n = backlog.produce(topic, 0, "tenant-a", 2, from, from + HOUR / 2, 60_000);
    BlockBuilderSink real = sink();
    CountDownLatch flushing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    BatchSink slow = beforeFlush(real, () -> {
      flushing.countDown();
      release.await();
    });
    BatchingConsumer c = start(config(broker), slow);
    assertThat(flushing.await(60, TimeUnit.SECONDS)).isTrue();
    Thread closer = new Thread(() -> {
      try {
        c.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    closer.start();
    await().atMost(10, TimeUnit.SECONDS).until(() -> closer.getState() == Thread.State.TIMED_WAITING);
    release.countDown();
    closer.join(60_000);
    assertThat(c.running()).isFalse();
    assertThat(committed(broker, group, topic)).isEqualTo(n);
    assertThat(found()).isEqualTo(backlog.expected);
  }
}
