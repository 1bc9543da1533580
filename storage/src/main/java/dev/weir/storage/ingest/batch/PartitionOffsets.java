package dev.weir.storage.ingest.batch;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a partition's next cycle starts (the committed offset = the next offset to read) and the
 * partition's end, checked against the partition as it is now:
 *
 * <ul>
 *   <li>no committed offset: start at the records {@code lookbackOnNoCommit} old;
 *   <li>committed below the log start (retention deleted records never consumed): start at the log
 *       start, count the missed records;
 *   <li>committed above the end: the offset belongs to an earlier incarnation of the topic (deleted
 *       and re-created, or truncated by an unclean leader election). Every record now in the
 *       partition was written after it and none was consumed, so start at the log start: starting
 *       at the end would silently drop them all, and waiting for the end to pass the old offset
 *       would drop every record until then.
 * </ul>
 *
 * <p>Both resets are logged at ERROR, counted in {@code offset.reset{reason}}, and committed at
 * once, so they are reported once rather than on every round. A missing topic or partition is a
 * {@link TopicMissing}, not a timeout.
 *
 * <p>Not thread-safe: used on the consumer's thread.
 */
final class PartitionOffsets {
  private static final Logger log = LoggerFactory.getLogger(PartitionOffsets.class);
  private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(10);

  private final BatchConfig config;
  private final BatchMetrics metrics;
  private final LongSupplier clock;

  /** The committed (start) offset of the next cycle and the partition's end offset. */
  record Range(long committed, long end, boolean reset) {
    Range(long committed, long end) {
      this(committed, end, false);
    }
  }

  /** The topic, or the partition, does not exist on the cluster. */
  static final class TopicMissing extends Exception {
    TopicMissing(String message) {
      super(message);
    }
  }

  PartitionOffsets(BatchConfig config, BatchMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
  }

  /**
   * @throws TopicMissing when the topic or partition does not exist
   * @throws org.apache.kafka.common.KafkaException when Kafka cannot answer
   */
  Range resolve(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) throws TopicMissing {
    checkExists(c, tp);
    OffsetAndMetadata om = c.committed(Set.of(tp)).get(tp);
    long begin = c.beginningOffsets(Set.of(tp)).get(tp);
    long end = c.endOffsets(Set.of(tp)).get(tp);
    if (om == null) {
      return new Range(lookbackStart(c, tp, end), end);
    }
    long committed = om.offset();
    if (committed > end) {
      metrics.offsetReset(tp.partition(), "after_end");
      log.error("msg=\"committed offset is past the partition's end: the topic was re-created or truncated; the"
          + " records after the committed offset of the earlier topic are lost to the block-builder; restarting at"
          + " the log start\" topic={} partition={} committed={} log_start={} end={}", tp.topic(), tp.partition(),
          committed, begin, end);
      return new Range(reset(c, tp, begin), end, true);
    }
    if (committed < begin) {
      metrics.offsetReset(tp.partition(), "before_start");
      metrics.missed(tp.partition(), begin - committed);
      log.error("msg=\"records were deleted by retention before they were consumed; restarting at the log start\""
          + " topic={} partition={} committed={} log_start={} missed_records={}", tp.topic(), tp.partition(),
          committed, begin, begin - committed);
      return new Range(reset(c, tp, begin), end, true);
    }
    return new Range(committed, end);
  }

  private void checkExists(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) throws TopicMissing {
    List<PartitionInfo> parts = c.partitionsFor(tp.topic(), METADATA_TIMEOUT);
    if (parts == null || parts.isEmpty()) {
      throw new TopicMissing("topic " + tp.topic() + " does not exist");
    }
    if (parts.stream().noneMatch(p -> p.partition() == tp.partition())) {
      throw new TopicMissing("partition " + tp.partition() + " of topic " + tp.topic() + " does not exist (the"
          + " topic has " + parts.size() + " partitions)");
    }
  }

  private long reset(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long to) {
    c.commitSync(Map.of(tp, new OffsetAndMetadata(to)), METADATA_TIMEOUT);
    return to;
  }

  private long lookbackStart(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long end) {
    long since = clock.getAsLong() - config.lookbackOnNoCommit().toMillis();
    OffsetAndTimestamp at = c.offsetsForTimes(Map.of(tp, since)).get(tp);
    long start = at != null ? at.offset() : end;
    log.info("msg=\"no committed offset; starting from the lookback\" partition={} lookback={}s offset={}",
        tp.partition(), config.lookbackOnNoCommit().toSeconds(), start);
    return start;
  }
}
