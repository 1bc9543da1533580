package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ServerErrorException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When and how {@link OffsetCommitter} commits, against a {@link FakeConsumer} and a manual clock. */
class OffsetCommitterTest {
  private static final TopicPartition TP = new TopicPartition("t", 0);
  private static final Duration INTERVAL = Duration.ofSeconds(1);

  @TempDir Path dir;
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final FakeConsumer consumer = new FakeConsumer(events);
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final AtomicInteger syncFailures = new AtomicInteger();
  private final ReaderMetrics metrics = ReaderMetrics.noop(0);
  private OffsetFile offsetFile;
  private OffsetCommitter committer;

  @BeforeEach
  void setUp() {
    consumer.assign(List.of(TP));
    offsetFile = new OffsetFile(dir, "t", 0);
    committer = new OffsetCommitter(TP, this::sync, offsetFile, metrics, now::get, INTERVAL);
  }

  private void sync() {
    if (syncFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      events.add("sync failed");
      throw new ServerErrorException("disk full");
    }
    events.add("sync");
  }

  private long committed() {
    OffsetAndMetadata o = consumer.committed(Set.of(TP)).get(TP);
    return o == null ? -1 : o.offset();
  }

  @Test
  void commitsOnlyWhenTheIntervalHasPassedSinceTheLastAttempt() {
    committer.maybeCommit(consumer, 5);
    assertThat(committed()).isEqualTo(5);
    now.addAndGet(999);
    committer.maybeCommit(consumer, 6);
    assertThat(committed()).as("interval not over").isEqualTo(5);
    now.addAndGet(1);
    committer.maybeCommit(consumer, 7);
    assertThat(committed()).isEqualTo(7);
    assertThat(events).containsExactly("sync", "commit 5", "sync", "commit 7");
  }

  @Test
  void syncsTheWalBeforeCommittingTheGroupOffset() {
    assertThat(committer.commit(consumer, 42)).isTrue();
    assertThat(events).containsExactly("sync", "commit 42");
    assertThat(committer.lastCommitted()).isEqualTo(42);
    assertThat(metrics.lastCommitted.get()).isEqualTo(42);
    assertThat(metrics.lastCommitMillis.get()).isEqualTo(now.get());
  }

  @Test
  void doesNotCommitWhenTheSyncFailsAndRetriesAtTheNextInterval() {
    syncFailures.set(1);
    committer.maybeCommit(consumer, 10);
    assertThat(committed()).as("nothing committed past a record that is not durable").isEqualTo(-1);
    assertThat(metrics.commitFailures.count()).isEqualTo(1);
    assertThat(committer.lastCommitted()).isEqualTo(-1);
    assertThat(offsetFile.path()).doesNotExist();

    now.addAndGet(500);
    committer.maybeCommit(consumer, 10);
    assertThat(events).as("no new attempt within the interval").containsExactly("sync failed");

    now.addAndGet(500);
    committer.maybeCommit(consumer, 12);
    assertThat(committed()).isEqualTo(12);
    assertThat(events).containsExactly("sync failed", "sync", "commit 12");
  }

  @Test
  void aFailedGroupCommitIsCountedAndRetriedNextTime() {
    consumer.failNext("commitSync", 1, new KafkaException("coordinator not available"));
    assertThat(committer.commit(consumer, 8)).isFalse();
    assertThat(metrics.commitFailures.count()).isEqualTo(1);
    assertThat(committer.lastCommitted()).isEqualTo(-1);
    assertThat(committer.commit(consumer, 8)).isTrue();
    assertThat(committed()).isEqualTo(8);
  }

  @Test
  void commitsALowerOffsetThanTheLastOneAfterTopicRecreation() {
    committer.commit(consumer, 1_000);
    assertThat(committer.commit(consumer, 3)).isTrue();
    assertThat(committed()).isEqualTo(3);
    assertThat(metrics.lastCommitted.get()).isEqualTo(3);
  }

  @Test
  void doesNotCommitAnUnchangedOffsetOrNothingDoneYet() {
    committer.knownCommitted(20);
    assertThat(committer.commit(consumer, 20)).isTrue();
    assertThat(committer.commit(consumer, -1)).isTrue();
    assertThat(events).as("neither synced nor committed").isEmpty();
    assertThat(metrics.lastCommitted.get()).isEqualTo(20);
  }

  @Test
  void refusesToCommitWhenTheConsumerIsNotAssignedExactlyThePartition() {
    consumer.assign(List.of(new TopicPartition("t", 1)));
    assertThatThrownBy(() -> committer.commit(consumer, 5)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refusing to commit");
    consumer.assign(List.of(TP, new TopicPartition("t", 1)));
    assertThatThrownBy(() -> committer.commit(consumer, 5)).isInstanceOf(IllegalStateException.class);
    assertThat(events).as("not even synced").isEmpty();
  }

  @Test
  void fakeConsumerFailsTheCommitWhileAWakeupIsPending() {
    consumer.wakeup();
    assertThatThrownBy(() -> committer.commit(consumer, 5)).as("what commitFinal has to survive")
        .isInstanceOf(WakeupException.class);
    assertThat(committed()).isEqualTo(-1);
  }

  @Test
  void finalCommitSurvivesOnePendingWakeup() {
    consumer.wakeup();
    assertThat(committer.commitFinal(consumer, 77)).isTrue();
    assertThat(committed()).isEqualTo(77);
    assertThat(metrics.commitFailures.count()).isZero();
  }

  @Test
  void writesTheOffsetFileAfterTheGroupCommit() throws Exception {
    committer.commit(consumer, 5);
    assertThat(offsetFile.read()).hasValue(5);
    committer.commit(consumer, 9);
    assertThat(new OffsetFile(dir, "t", 0).read()).hasValue(9);
  }

  @Test
  void anUnwritableOffsetFileDoesNotFailTheCommit() throws Exception {
    java.nio.file.Files.writeString(dir.resolve("kafka-offsets"), "a file where the directory should be");
    assertThat(committer.commit(consumer, 5)).isTrue();
    assertThat(consumer.committed(Set.of(TP))).isEqualTo(Map.of(TP, new OffsetAndMetadata(5)));
  }
}
