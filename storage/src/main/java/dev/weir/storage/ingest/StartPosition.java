package dev.weir.storage.ingest;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the reader starts: the group's committed offset; else the offset file; else the
 * configured start position (last-offset without a commit means the start). With
 * prefer-offset-file the file wins over the group. After a failure the reader resumes at its last
 * applied offset instead. A position before the log start (deleted by retention) moves to it and
 * counts the records as missed; one beyond the end (topic re-created, partition truncated) moves to
 * the end. Every Kafka call goes through {@link KafkaRetry}.
 *
 * <p>Used by the reader thread only.
 */
final class StartPosition {
  private static final Logger log = LoggerFactory.getLogger(StartPosition.class);

  /** The resolved start, and the committed offset found (-1 when none). */
  record Start(long offset, long committed) {}

  private final KafkaConfig config;
  private final TopicPartition tp;
  private final OffsetFile offsetFile;
  private final ReaderMetrics metrics;

  StartPosition(KafkaConfig config, TopicPartition tp, OffsetFile offsetFile, ReaderMetrics metrics) {
    this.config = config;
    this.tp = tp;
    this.offsetFile = offsetFile;
    this.metrics = metrics;
  }

  /**
   * @param resumeAt the offset to resume at (the last applied one after a failure), or -1 for a
   *     fresh start
   */
  Start resolve(Consumer<?, ?> c, KafkaRetry retry, long resumeAt) throws InterruptedException {
    OffsetAndMetadata committed = retry.call("reading the committed offset", () -> c.committed(Set.of(tp)).get(tp));
    long begin = retry.call("reading the log start offset", () -> c.beginningOffsets(List.of(tp)).get(tp));
    long end = retry.call("reading the end offset", () -> c.endOffsets(List.of(tp)).get(tp));
    long start;
    String why;
    OptionalLong file = readOffsetFile();
    if (resumeAt >= 0) {
      start = resumeAt;
      why = "last applied offset (resuming after a failure)";
    } else if (config.preferOffsetFile() && file.isPresent()) {
      start = file.getAsLong();
      why = "offset file (preferred)";
    } else if (committed != null) {
      start = committed.offset();
      why = "committed offset of group " + config.consumerGroup();
    } else if (file.isPresent()) {
      start = file.getAsLong();
      why = "offset file (the group " + config.consumerGroup() + " has no committed offset)";
    } else {
      start = switch (config.startPosition()) {
        case "end" -> end;
        case "timestamp" -> {
          OffsetAndTimestamp at = retry.call("looking up the start timestamp",
              () -> c.offsetsForTimes(Map.of(tp, config.startTimestampMillis())).get(tp));
          yield at == null ? end : at.offset();
        }
        default -> begin;
      };
      why = "start position " + config.startPosition() + " (no committed offset)";
    }
    start = clamp(start, begin, end);
    log.info("msg=\"partition reader starting\" partition={} offset={} from=\"{}\" end_offset={}", tp.partition(),
        start, why, end);
    return new Start(start, committed == null ? -1 : committed.offset());
  }

  /**
   * The position to use when {@code wanted} is outside {@code [begin, end]}: the log start when
   * records were deleted before they were read (counted as missed), the end when the partition is
   * shorter than the position (re-created or truncated). Logged and counted by reason.
   */
  long clamp(long wanted, long begin, long end) {
    if (wanted < begin) {
      metrics.missedRecords.increment(begin - wanted);
      metrics.offsetReset("before_log_start");
      log.error("msg=\"records were deleted before they were read (retention?): moving to the log start\""
          + " partition={} wanted={} log_start={} missed={}", tp.partition(), wanted, begin, begin - wanted);
      return begin;
    }
    if (wanted > end) {
      metrics.offsetReset("beyond_end");
      log.error("msg=\"position beyond the partition end (topic re-created or truncated?): moving to the end\""
          + " partition={} wanted={} end={}", tp.partition(), wanted, end);
      return end;
    }
    return wanted;
  }

  /** {@code wanted}, moved into the partition's current range as {@link #clamp} does. */
  long clampToPartition(Consumer<?, ?> c, KafkaRetry retry, long wanted) throws InterruptedException {
    long begin = retry.call("reading the log start offset", () -> c.beginningOffsets(List.of(tp)).get(tp));
    long end = retry.call("reading the end offset", () -> c.endOffsets(List.of(tp)).get(tp));
    return clamp(wanted, begin, end);
  }

  private OptionalLong readOffsetFile() {
    try {
      return offsetFile.read();
    } catch (IOException e) {
      log.warn("msg=\"ignoring unreadable offset file\" file={} err=\"{}\"", offsetFile.path(), e.getMessage());
      return OptionalLong.empty();
    }
  }
}
