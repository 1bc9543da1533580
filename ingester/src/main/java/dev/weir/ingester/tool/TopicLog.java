package dev.weir.ingester.tool;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * What the admin client says about a topic: its partitions, each partition's log start and end
 * offsets, the offset of a timestamp, and a group's committed offsets. Read-only. Not
 * thread-safe; closing closes the admin client.
 */
final class TopicLog implements AutoCloseable {
  /** Offsets of one partition: {@code start} is the first record kept, {@code end} the next to be written. */
  record Bounds(long start, long end) {
    boolean contains(long offset) {
      return offset >= start && offset <= end;
    }

    @Override
    public String toString() {
      return "[" + start + ", " + end + ")";
    }
  }

  private final Admin admin;
  private final long timeoutMs;
  private final String address;

  TopicLog(KafkaToolFlags kafka) {
    this.admin = kafka.admin();
    this.address = kafka.address();
    this.timeoutMs = kafka.timeout().toMillis();
  }

  /** The number of partitions; a failure naming the topic when it does not exist. */
  int partitions(String topic) throws ToolException {
    try {
      return get(admin.describeTopics(List.of(topic)).allTopicNames(), "cannot describe topic " + topic + " at " + address)
          .get(topic).partitions().size();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw ToolException.failure("topic " + topic + " does not exist");
      }
      throw ToolException.failure("cannot describe topic " + topic + " at " + address + ": " + e.getCause());
    }
  }

  /** Fails unless the topic exists and has the partition. */
  void checkPartition(String topic, int partition) throws ToolException {
    int n = partitions(topic);
    if (partition < 0 || partition >= n) {
      throw ToolException.failure("topic " + topic + " has no partition " + partition + " (it has " + n
          + ": 0.." + (n - 1) + ")");
    }
  }

  Bounds bounds(String topic, int partition) throws ToolException {
    return bounds(topic, List.of(partition)).get(partition);
  }

  Map<Integer, Bounds> bounds(String topic, List<Integer> partitions) throws ToolException {
    Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p : partitions) {
      earliest.put(new TopicPartition(topic, p), OffsetSpec.earliest());
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = listOffsets(earliest);
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = listOffsets(latest);
    Map<Integer, Bounds> out = new HashMap<>();
    for (int p : partitions) {
      TopicPartition tp = new TopicPartition(topic, p);
      out.put(p, new Bounds(starts.get(tp).offset(), ends.get(tp).offset()));
    }
    return out;
  }

  /** The first offset whose record timestamp is at or after {@code timestampMs}, or null when there is none. */
  @Nullable Long offsetForTime(String topic, int partition, long timestampMs) throws ToolException {
    TopicPartition tp = new TopicPartition(topic, partition);
    long offset = listOffsets(Map.of(tp, OffsetSpec.forTimestamp(timestampMs))).get(tp).offset();
    return offset < 0 ? null : offset;
  }

  /**
   * The group's committed offsets (the next offset to read) in the topic, by partition; a failure
   * when the group has none there (an unknown group, or one that never committed to the topic).
   */
  Map<Integer, Long> committed(String group, String topic) throws ToolException {
    Map<TopicPartition, OffsetAndMetadata> all;
    try {
      all = get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(),
          "cannot read the offsets of consumer group " + group);
    } catch (ExecutionException e) {
      throw ToolException.failure("cannot read the offsets of consumer group " + group + ": " + e.getCause());
    }
    Map<Integer, Long> out = new HashMap<>();
    all.forEach((tp, om) -> {
      if (om != null && tp.topic().equals(topic)) {
        out.put(tp.partition(), om.offset());
      }
    });
    if (out.isEmpty()) {
      throw ToolException.failure("consumer group " + group + " has no committed offset in topic " + topic
          + " (unknown group, or it never committed there)");
    }
    return out;
  }

  private Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> listOffsets(
      Map<TopicPartition, OffsetSpec> specs) throws ToolException {
    try {
      return get(admin.listOffsets(specs).all(), "cannot list offsets of " + specs.keySet());
    } catch (ExecutionException e) {
      throw ToolException.failure("cannot list offsets of " + specs.keySet() + ": " + e.getCause());
    }
  }

  /**
   * Waits at most {@code --kafka.timeout}; a timeout here reads like the admin client's own one (which
   * races with it), so the one line an operator sees names the same operation either way.
   */
  private <T> T get(KafkaFuture<T> f, String failing) throws ExecutionException, ToolException {
    try {
      return f.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw ToolException.failure(failing + ": Kafka at " + address + " did not answer within " + timeoutMs + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ToolException.failure("interrupted");
    }
  }

  @Override
  public void close() {
    admin.close();
  }
}
