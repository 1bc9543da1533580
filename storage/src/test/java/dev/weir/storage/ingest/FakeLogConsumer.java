package dev.weir.storage.ingest;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteBufferDeserializer;

/**
 * A {@link KafkaConsumer} that reads one partition from an in-memory log instead of a broker, for
 * code that takes the concrete class ({@link ConcurrentFetcher}). Kafka's {@code MockConsumer} does
 * not fit there: it is not a {@code KafkaConsumer}, and it forgets records once polled, while each
 * fetcher re-seeks across one shared log. The real consumer underneath is never connected (it
 * points at a closed port and only its constructor and close run). Used by its fetch thread only.
 */
class FakeLogConsumer extends KafkaConsumer<byte[], ByteBuffer> {
  /** Called before each poll with the position; may block (a slow fetch) or throw (a failed one). */
  interface PollHook {
    void beforePoll(long position) throws InterruptedException;
  }

  private final TopicPartition tp;
  private final List<ConsumerRecord<byte[], ByteBuffer>> log;
  private final int maxPollRecords;
  private final PollHook hook;
  private volatile boolean wakeup;
  private Set<TopicPartition> assigned = Set.of();
  private long position;

  /** @param log the partition's records, offset i at index i */
  FakeLogConsumer(TopicPartition tp, List<ConsumerRecord<byte[], ByteBuffer>> log, int maxPollRecords, PollHook hook) {
    super(offlineConfig());
    this.tp = tp;
    this.log = log;
    this.maxPollRecords = maxPollRecords;
    this.hook = hook;
  }

  private static Properties offlineConfig() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteBufferDeserializer.class);
    return p;
  }

  @Override
  public void assign(Collection<TopicPartition> partitions) {
    assigned = Set.copyOf(partitions);
  }

  @Override
  public Set<TopicPartition> assignment() {
    return assigned;
  }

  @Override
  public void seek(TopicPartition partition, long offset) {
    position = offset;
  }

  @Override
  public long position(TopicPartition partition) {
    return position;
  }

  @Override
  public ConsumerRecords<byte[], ByteBuffer> poll(Duration timeout) {
    if (wakeup) {
      wakeup = false;
      throw new WakeupException();
    }
    try {
      hook.beforePoll(position);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new WakeupException();
    }
    List<ConsumerRecord<byte[], ByteBuffer>> out = new ArrayList<>();
    while (out.size() < maxPollRecords && position < log.size()) {
      out.add(log.get((int) position++));
    }
    return new ConsumerRecords<>(Map.of(tp, out), Map.of());
  }

  @Override
  public void wakeup() {
    wakeup = true;
  }

  @Override
  public void close(Duration timeout) {
    super.close(Duration.ZERO);
  }
}
