package dev.weir.ingester.tool;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Reads records of one partition with a group-less consumer ({@code assign()} + {@code seek()}):
 * nothing is committed and the source is never written. Offsets missing inside a range (compacted
 * records, transaction markers) are skipped: reading ends when the consumer's position reaches
 * the end of the range. Not thread-safe; closing closes the consumer.
 */
final class RecordReader implements AutoCloseable {
  /** Receives each record of a range, in offset order. */
  @FunctionalInterface
  interface Handler {
    void accept(ConsumerRecord<byte[], byte[]> record) throws Exception;
  }

  private static final Duration POLL = Duration.ofMillis(200);
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Duration timeout;

  RecordReader(KafkaToolFlags kafka) {
    this.consumer = kafka.consumer();
    this.timeout = kafka.timeout();
  }

  /**
   * Hands every record of {@code [from, to)} to the handler; fails when no progress is made for
   * the timeout.
   *
   * @return the number of records handed over
   */
  long read(RangeFlags.Range r, Handler handler) throws Exception {
    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
    consumer.assign(List.of(tp));
    consumer.seek(tp, r.from());
    long count = 0;
    long position = r.from();
    long lastProgress = System.nanoTime();
    while (position < r.to()) {
      ConsumerRecords<byte[], byte[]> batch = consumer.poll(POLL);
      for (ConsumerRecord<byte[], byte[]> rec : batch.records(tp)) {
        if (rec.offset() >= r.to()) {
          break;
        }
        handler.accept(rec);
        count++;
      }
      long now = consumer.position(tp);
      if (now > position) {
        position = now;
        lastProgress = System.nanoTime();
      } else if (System.nanoTime() - lastProgress > timeout.toNanos()) {
        throw ToolException.failure("no progress reading " + tp + " at offset " + position + " for " + timeout
            + " (range ends at " + r.to() + ")");
      }
    }
    return count;
  }

  /**
   * The timestamp of the first record at or after {@code offset} (or the log start, when that is
   * later) and before the log end, or null when there is none.
   */
  @Nullable Long timestampAt(String topic, int partition, long offset, TopicLog.Bounds log) throws Exception {
    long end = log.end();
    long from = Math.max(offset, log.start());
    if (from >= end) {
      return null;
    }
    TopicPartition tp = new TopicPartition(topic, partition);
    consumer.assign(List.of(tp));
    consumer.seek(tp, from);
    long started = System.nanoTime();
    while (consumer.position(tp) < end) {
      List<ConsumerRecord<byte[], byte[]>> recs = consumer.poll(POLL).records(tp);
      if (!recs.isEmpty()) {
        return recs.get(0).offset() < end ? recs.get(0).timestamp() : null;
      }
      if (System.nanoTime() - started > timeout.toNanos()) {
        throw ToolException.failure("no record read from " + tp + " at offset " + offset + " for " + timeout);
      }
    }
    return null;
  }

  @Override
  public void close() {
    consumer.close();
  }
}
