package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits the offset after the last fully appended record (Kafka's convention: the committed
 * offset is the next one to read), every commit interval and once at shutdown: first the WAL is
 * fsynced, so everything before the offset is durable; then the group offset; then the offset
 * file. A failed sync or commit is counted and retried at the next interval; nothing is ever
 * committed past a record that is not durable.
 *
 * <p>Used by the reader thread only.
 */
final class OffsetCommitter {
  private static final Logger log = LoggerFactory.getLogger(OffsetCommitter.class);

  private final TopicPartition tp;
  private final Runnable sync;
  private final OffsetFile offsetFile;
  private final ReaderMetrics metrics;
  private final LongSupplier clock;
  private final long intervalMillis;
  private long lastCommitted = -1;
  private long lastAttempt;

  OffsetCommitter(TopicPartition tp, Runnable sync, OffsetFile offsetFile, ReaderMetrics metrics, LongSupplier clock,
      Duration interval) {
    this.tp = tp;
    this.sync = sync;
    this.offsetFile = offsetFile;
    this.metrics = metrics;
    this.clock = clock;
    this.intervalMillis = interval.toMillis();
  }

  /** The group's offset as found at start-up (so an unchanged position is not committed again). */
  void knownCommitted(long offset) {
    lastCommitted = offset;
    metrics.lastCommitted.set(offset);
  }

  long lastCommitted() {
    return lastCommitted;
  }

  /** Commits {@code next} when an interval has passed since the last attempt. */
  void maybeCommit(Consumer<?, ?> c, long next) {
    long now = clock.getAsLong();
    if (now - lastAttempt >= intervalMillis) {
      lastAttempt = now;
      commit(c, next);
    }
  }

  /**
   * The final commit at shutdown. A stop request may have left a {@code wakeup()} pending on the
   * consumer, which would fail the first blocking call: that one is retried once.
   *
   * @return whether {@code next} is committed
   */
  boolean commitFinal(Consumer<?, ?> c, long next) {
    boolean ok;
    try {
      ok = commit(c, next);
    } catch (WakeupException pending) {
      ok = commit(c, next);
    }
    if (ok && next >= 0) {
      log.info("msg=\"final offset committed\" partition={} offset={}", tp.partition(), next);
    }
    return ok;
  }

  /**
   * Commits {@code next} (-1: nothing done yet) if it differs from the last commit — lower too:
   * after a topic re-creation the position starts again below the old committed offset.
   *
   * @return false when the sync or the commit failed
   */
  boolean commit(Consumer<?, ?> c, long next) {
    if (next < 0 || next == lastCommitted) {
      return true;
    }
    if (!c.assignment().equals(Set.of(tp))) {
      throw new IllegalStateException("refusing to commit: assignment " + c.assignment() + " is not " + tp);
    }
    try {
      sync.run();
      c.commitSync(Map.of(tp, new OffsetAndMetadata(next)), Duration.ofSeconds(10));
    } catch (WakeupException e) {
      throw e;
    } catch (ServerErrorException | KafkaException e) {
      metrics.commitFailures.increment();
      log.warn("msg=\"offset commit failed, retrying at the next interval\" partition={} offset={} err=\"{}\"",
          tp.partition(), next, e.toString());
      return false;
    }
    lastCommitted = next;
    metrics.lastCommitted.set(next);
    metrics.lastCommitMillis.set(clock.getAsLong());
    try {
      offsetFile.write(next);
    } catch (IOException e) {
      log.warn("msg=\"cannot write the offset file (the group offset is committed)\" file={} err=\"{}\"",
          offsetFile.path(), e.getMessage());
    }
    return true;
  }
}
