package dev.weir.storage.ingest;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * Kafka's {@link MockConsumer} with what the reader's start-up and commit code needs and the mock
 * lacks: a pending {@link #wakeup()} fails the next {@code commitSync} once (as it does on a real
 * consumer; the mock only checks it in {@code poll}), calls that fail a given number of times,
 * {@code offsetsForTimes} answers, and a log of commits. Thread-safe as the mock is.
 */
class FakeConsumer extends MockConsumer<byte[], byte[]> {
  /** Events in order ("commit 5"); tests add their own (e.g. "sync"). */
  final List<String> events;
  private final Map<String, Integer> failuresLeft = new HashMap<>();
  private final Map<String, KafkaException> failureOf = new HashMap<>();
  private final Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes = new HashMap<>();
  private boolean wakeupPending;

  FakeConsumer() {
    this(new CopyOnWriteArrayList<>());
  }

  FakeConsumer(List<String> events) {
    super("none");
    this.events = events;
  }

  /** The next {@code times} calls of {@code call} ("committed", "beginningOffsets", "endOffsets", "commitSync") throw {@code e}. */
  synchronized void failNext(String call, int times, KafkaException e) {
    failuresLeft.put(call, times);
    failureOf.put(call, e);
  }

  synchronized void answerOffsetsForTimes(TopicPartition tp, OffsetAndTimestamp at) {
    offsetsForTimes.put(tp, at);
  }

  private synchronized void maybeFail(String call) {
    int left = failuresLeft.getOrDefault(call, 0);
    if (left > 0) {
      failuresLeft.put(call, left - 1);
      throw failureOf.get(call);
    }
  }

  @Override
  public synchronized void wakeup() {
    wakeupPending = true;
    super.wakeup();
  }

  @Override
  public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
    synchronized (this) {
      if (wakeupPending) {
        wakeupPending = false;
        throw new WakeupException();
      }
    }
    maybeFail("commitSync");
    offsets.values().forEach(o -> events.add("commit " + o.offset()));
    super.commitSync(offsets);
  }

  @Override
  public synchronized Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
    maybeFail("committed");
    return super.committed(partitions);
  }

  @Override
  public synchronized Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
    maybeFail("beginningOffsets");
    return super.beginningOffsets(partitions);
  }

  @Override
  public synchronized Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
    maybeFail("endOffsets");
    return super.endOffsets(partitions);
  }

  @Override
  public synchronized Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> timestamps) {
    Map<TopicPartition, OffsetAndTimestamp> out = new HashMap<>();
    timestamps.keySet().forEach(tp -> out.put(tp, offsetsForTimes.get(tp)));
    return out;
  }
}
