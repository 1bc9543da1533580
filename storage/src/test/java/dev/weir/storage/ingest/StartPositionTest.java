package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the reader starts ({@link StartPosition}), against a {@link FakeConsumer}: log start 10, end 100. */
class StartPositionTest {
  private static final TopicPartition TP = new TopicPartition("t", 0);

  @TempDir Path dir;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ReaderMetrics metrics = new ReaderMetrics(registry, 0);
  private final FakeConsumer consumer = new FakeConsumer();
  private final List<@Nullable String> problems = Collections.synchronizedList(new ArrayList<>());
  private final KafkaRetry retry = new KafkaRetry(0, metrics, () -> false, problems::add);
  private final KafkaConfig config = KafkaConfig.defaults("localhost:9", "t", "g");
  private OffsetFile offsetFile;

  @BeforeEach
  void setUp() {
    consumer.assign(List.of(TP));
    consumer.updateBeginningOffsets(Map.of(TP, 10L));
    consumer.updateEndOffsets(Map.of(TP, 100L));
    offsetFile = new OffsetFile(dir, "t", 0);
  }

  private void commit(long offset) {
    consumer.commitSync(Map.of(TP, new OffsetAndMetadata(offset)));
  }

  private StartPosition.Start resolve(KafkaConfig cfg, long resumeAt) throws InterruptedException {
    return new StartPosition(cfg, TP, offsetFile, metrics).resolve(consumer, retry, resumeAt);
  }

  private double resets(String reason) {
    var c = registry.find("weir.ingest.storage.reader.offset.resets").tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private double missed() {
    return registry.get("weir.ingest.storage.reader.missed.records").counter().count();
  }

  @Test
  void committedOffsetWinsOverTheOffsetFile() throws Exception {
    commit(50);
    offsetFile.write(70);
    assertThat(resolve(config, -1)).isEqualTo(new StartPosition.Start(50, 50));
  }

  @Test
  void withoutACommitTheOffsetFileDecides() throws Exception {
    offsetFile.write(70);
    assertThat(resolve(config, -1)).isEqualTo(new StartPosition.Start(70, -1));
  }

  @Test
  void preferOffsetFileMakesTheFileWinOverTheCommit() throws Exception {
    commit(50);
    offsetFile.write(70);
    assertThat(resolve(config.withPreferOffsetFile(true), -1)).isEqualTo(new StartPosition.Start(70, 50));
  }

  @Test
  void preferOffsetFileWithoutAFileFallsBackToTheCommit() throws Exception {
    commit(50);
    assertThat(resolve(config.withPreferOffsetFile(true), -1).offset()).isEqualTo(50);
  }

  @Test
  void withoutCommitOrFileTheStartPositionDecides() throws Exception {
    assertThat(resolve(config, -1).offset()).as("last-offset without a commit = start").isEqualTo(10);
    assertThat(resolve(config.withStart("start", 0), -1).offset()).isEqualTo(10);
    assertThat(resolve(config.withStart("end", 0), -1).offset()).isEqualTo(100);
    consumer.answerOffsetsForTimes(TP, new OffsetAndTimestamp(42, 1_700_000_000_000L));
    assertThat(resolve(config.withStart("timestamp", 1_700_000_000_000L), -1).offset()).isEqualTo(42);
  }

  @Test
  void timestampAfterTheLastRecordStartsAtTheEnd() throws Exception {
    assertThat(resolve(config.withStart("timestamp", Long.MAX_VALUE), -1).offset()).isEqualTo(100);
  }

  @Test
  void resumeAtWinsOverEverything() throws Exception {
    commit(50);
    offsetFile.write(70);
    assertThat(resolve(config.withPreferOffsetFile(true), 60)).isEqualTo(new StartPosition.Start(60, 50));
  }

  @Test
  void anUnreadableOffsetFileIsIgnored() throws Exception {
    Files.createDirectories(offsetFile.path().getParent());
    Files.writeString(offsetFile.path(), "not a number");
    assertThat(resolve(config.withStart("end", 0), -1).offset()).isEqualTo(100);
  }

  @Test
  void committedOffsetBeforeTheLogStartMovesToTheLogStartAndCountsMissedRecords() throws Exception {
    commit(3);
    assertThat(resolve(config, -1)).isEqualTo(new StartPosition.Start(10, 3));
    assertThat(missed()).isEqualTo(7);
    assertThat(resets("before_log_start")).isEqualTo(1);
    assertThat(resets("beyond_end")).isZero();
  }

  @Test
  void committedOffsetBeyondTheEndMovesToTheEnd() throws Exception {
    commit(150);
    assertThat(resolve(config, -1).offset()).isEqualTo(100);
    assertThat(resets("beyond_end")).isEqualTo(1);
    assertThat(missed()).isZero();
  }

  @Test
  void offsetsAtTheBoundsAreKept() throws Exception {
    commit(100);
    assertThat(resolve(config, -1).offset()).as("the end: nothing to read yet").isEqualTo(100);
    commit(10);
    assertThat(resolve(config, -1).offset()).isEqualTo(10);
    assertThat(resets("beyond_end") + resets("before_log_start")).isZero();
  }

  @Test
  void failingKafkaCallsAreRetriedAndTheProblemIsReportedThenCleared() throws Exception {
    commit(50);
    consumer.failNext("committed", 2, new TimeoutException("broker unreachable"));
    consumer.failNext("endOffsets", 1, new TimeoutException("no leader"));
    assertThat(resolve(config, -1).offset()).isEqualTo(50);
    assertThat(problems).hasSize(5);
    assertThat(problems.get(0)).contains("reading the committed offset", "broker unreachable");
    assertThat(problems.get(1)).contains("attempt 2");
    assertThat(problems.get(2)).isNull();
    assertThat(problems.get(3)).contains("reading the end offset", "no leader");
    assertThat(problems.get(4)).isNull();
    assertThat(registry.get("weir.ingest.storage.reader.kafka.call.errors").counter().count()).isEqualTo(3);
  }
}
