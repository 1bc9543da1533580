package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.testing.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The reader under real faults: a pipeline that dies (an exception, an {@link Error}), a broker
 * down at start-up and during catch-up, retention deleting unread records, a topic deleted and
 * re-created under the reader. Every test counts what was produced against what was appended.
 */
class PartitionReaderFaultsIT extends ReaderITBase {
  /** Every series holds exactly the timestamps {@code [base + from, base + to)}, each once. */
  private static void assertExactly(RecordingPusher p, int series, long base, int from, int to) {
    assertThat(p.samples).hasSize(series);
    p.samples.forEach((k, ts) -> {
      List<Long> distinct = ts.stream().distinct().sorted().toList();
      assertThat(distinct).as("series %s", k).hasSize(to - from);
      assertThat(distinct.get(0)).isEqualTo(base + from);
      assertThat(distinct.get(distinct.size() - 1)).isEqualTo(base + to - 1);
    });
  }

  private static double counter(SimpleMeterRegistry reg, String name, String tag, String value) {
    var c = reg.find(name).tag(tag, value).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void anErrorInAShardMakesTheReaderNotReadyThenItResumesFromTheLastAppliedOffset() throws Exception {
    aPipelineFailureIsVisibleAndRecovered(2, () -> new AssertionError("injected bug in a shard"));
  }

  @Test
  void anExceptionInTheSequentialLoopMakesTheReaderNotReadyThenItResumes() throws Exception {
    aPipelineFailureIsVisibleAndRecovered(0, () -> new IllegalStateException("injected bug"));
  }

  private void aPipelineFailureIsVisibleAndRecovered(int shards, java.util.function.Supplier<Throwable> bug)
      throws Exception {
    KafkaConfig cfg = config(shards);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 100, 5, 0);
    RecordingPusher p = new RecordingPusher();
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    PartitionReader r = reader(cfg, p, new ReaderMetrics(reg, 0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed() == 100 && r.notReadyReason() == null);
    p.crash = bug;
    produce(cfg, 100, 200, 5, 0);
    await().atMost(30, TimeUnit.SECONDS).until(() -> r.notReadyReason() != null);
    assertThat(r.notReadyReason()).contains("partition reader failed").contains("injected bug");
    assertThat(committed()).as("nothing after the failing record is committed").isLessThanOrEqualTo(100);
    assertThat(reg.get("weir.ingest.storage.reader.restarts").counter().count()).isPositive();
    p.crash = null;
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed() == 200 && r.notReadyReason() == null);
    assertExactly(p, 5, 0, 0, 200);
    assertThat(p.orderViolations).isEmpty();
  }

  @Test
  void aBrokerDownAtStartUpKeepsTheReaderNotReadyWithTheReasonUntilItReturns() throws Exception {
    broker = KafkaBroker.start(dir.resolve("broker"));
    closeables.add(broker);
    KafkaConfig cfg = config(2);
    broker.createTopic(topic, 1);
    produce(cfg, 0, 50, 4, 0);
    broker.stop();
    RecordingPusher p = new RecordingPusher();
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    PartitionReader r = reader(cfg, p, new ReaderMetrics(reg, 0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> reg.get("weir.ingest.storage.reader.kafka.call.errors")
        .counter().count() >= 2);
    assertThat(r.notReadyReason()).contains("Kafka unavailable");
    broker.restart();
    produce(cfg, 50, 80, 4, 0);
    await().atMost(90, TimeUnit.SECONDS).until(() -> committed() == 80 && r.notReadyReason() == null);
    assertExactly(p, 4, 0, 0, 80);
  }

  @Test
  void aBrokerStoppedDuringCatchUpDelaysItAndNothingIsMissed() throws Exception {
    broker = KafkaBroker.start(dir.resolve("broker"));
    closeables.add(broker);
    KafkaConfig cfg = config(2);
    broker.createTopic(topic, 1);
    produce(cfg, 0, 600, 4, 0);
    RecordingPusher p = new RecordingPusher();
    p.delayMillis = 10; // about 6 s of catch-up
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    PartitionReader r = reader(cfg, p, new ReaderMetrics(reg, 0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> p.total.get() > 0);
    broker.stop();
    assertThat(r.caughtUp()).isFalse();
    Thread.sleep(8_000); // the outage: the reader drains what it fetched, then waits for the broker
    assertThat(r.notReadyReason()).isNotNull();
    broker.restart();
    p.delayMillis = 0;
    await().atMost(120, TimeUnit.SECONDS).until(() -> committed() == 600 && r.caughtUp());
    assertThat(r.notReadyReason()).isNull();
    assertExactly(p, 4, 0, 0, 600);
    assertThat(reg.get("weir.ingest.storage.reader.missed.records").counter().count()).isZero();
  }

  @Test
  void retentionDeletingUnreadRecordsAtRunTimeMovesToTheLogStartAndCountsThem() throws Exception {
    KafkaConfig cfg = config(2);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 10, 1, 0);
    RecordingPusher p = new RecordingPusher();
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    PartitionReader r = reader(cfg, p, new ReaderMetrics(reg, 0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed() == 10);
    p.failing.set(true); // hold the reader at offset 10 while records are deleted under it
    produce(cfg, 10, 40, 1, 0);
    await().until(() -> p.serverErrors.get() > 0);
    try (Admin a = broker().admin()) {
      a.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(30))).all()
          .get(10, TimeUnit.SECONDS);
    }
    p.failing.set(false);
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed() == 40);
    assertThat(r.notReadyReason()).isNull();
    // Records fetched before the deletion were appended; the rest up to 30 was deleted unread.
    List<Long> ts = p.samples.values().iterator().next().stream().distinct().sorted().toList();
    assertThat(ts).containsSubsequence(30L, 39L).startsWith(0L);
    long missed = (long) reg.get("weir.ingest.storage.reader.missed.records").counter().count();
    assertThat(ts.size() + missed).as("appended + counted missed = all 40 records").isEqualTo(40);
  }

  @Test
  void aTopicDeletedAtRunTimeIsNotReadyAndARecreatedOneIsReadFromItsStart() throws Exception {
    KafkaConfig cfg = config(2);
    broker().createTopic(topic, 1);
    produce(cfg, 0, 50, 2, 0);
    RecordingPusher p = new RecordingPusher();
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    PartitionReader r = reader(cfg, p, new ReaderMetrics(reg, 0));
    await().atMost(60, TimeUnit.SECONDS).until(() -> committed() == 50 && r.notReadyReason() == null);
    try (Admin a = broker().admin()) {
      a.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
    }
    await().atMost(60, TimeUnit.SECONDS).until(() -> r.notReadyReason() != null
        && r.notReadyReason().contains("does not exist"));
    broker().createTopic(topic, 1);
    produce(cfg, 0, 20, 2, 1_000); // the new topic's offsets 0..19, newer samples
    await().atMost(90, TimeUnit.SECONDS).until(() -> p.total.get() == 2 * 70);
    await().atMost(30, TimeUnit.SECONDS).until(() -> committed() == 20 && r.notReadyReason() == null);
    List<Long> expected = new ArrayList<>();
    for (long k = 0; k < 50; k++) {
      expected.add(k);
    }
    for (long k = 0; k < 20; k++) {
      expected.add(1_000 + k);
    }
    p.samples.forEach((k, ts) -> assertThat(ts).as("old topic, then all of the new one").isEqualTo(expected));
    assertThat(counter(reg, "weir.ingest.storage.reader.offset.resets", "reason", "topic_recreated")
        + counter(reg, "weir.ingest.storage.reader.offset.resets", "reason", "beyond_end")).isPositive();
  }
}
