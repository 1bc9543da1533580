package dev.weir.ingester.tool;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.ingester.config.Flag;
import dev.weir.storage.ingest.KafkaConfig;
import java.io.PrintStream;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@code weir tool replay}: copies a range of one partition — key, value, headers and (by
 * default) timestamp of each record, in order — to a partition of another topic, or another
 * partition of the same topic, with an idempotent acks=all producer. It refuses to write into the
 * topic and partition it reads. Prints one JSON line: what was copied where.
 */
final class ReplayCommand extends ToolCommand {
  /** Kafka's default max.message.bytes is 1 MiB; Weir's records may be up to 15.2 MiB, plus slack. */
  private static final int MAX_REQUEST_BYTES = 17 << 20;
  private final KafkaToolFlags kafka = new KafkaToolFlags(flags);
  private final Flag<String> fromTopic = flags.string("from-topic", "", "Topic to read (required).");
  private final RangeFlags range = new RangeFlags(flags);
  private final Flag<String> toTopic = flags.string("to-topic", "", "Topic to write to (required).");
  private final Flag<Integer> toPartition = flags.integer("to-partition", -1, "Partition to write to; -1 = the"
      + " same number as --partition.");
  private final Flag<Boolean> keepTimestamps = flags.bool("keep-timestamps", true, "Keep each record's timestamp;"
      + " false lets the producer stamp the time of the copy.");
  private final Flag<String> compression = flags.oneOf("compression", KafkaConfig.DEFAULT_COMPRESSION,
      KafkaConfig.COMPRESSIONS, "Codec of the record batches written (as the distributor's"
      + " -ingest-storage.kafka.producer-compression).");

  @Override
  String name() {
    return "replay";
  }

  @Override
  String summary() {
    return "Copy a range of records (key, value, headers) to another topic or partition.";
  }

  @Override
  int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
    if (toTopic.get().isEmpty()) {
      throw ToolException.usage("--to-topic is required");
    }
    int target = toPartition.get() >= 0 ? toPartition.get() : range.partition();
    if (toTopic.get().equals(fromTopic.get()) && target == range.partition()) {
      throw ToolException.usage("refusing to write into the partition it reads (" + fromTopic.get() + " partition "
          + target + "): give another --to-topic or --to-partition");
    }
    RangeFlags.Range r = KafkaRanges.resolve(kafka, fromTopic, range, args);
    try (TopicLog log = new TopicLog(kafka)) {
      log.checkPartition(toTopic.get(), target);
    }
    long copied = copy(r, target);
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"from_topic\":").string(r.topic());
    w.raw(",\"partition\":").number(r.partition()).raw(",\"from_offset\":").number(r.from());
    w.raw(",\"to_offset\":").number(r.to()).raw(",\"to_topic\":").string(toTopic.get());
    out.println(w.raw(",\"to_partition\":").number(target).raw(",\"records\":").number(copied).raw('}'));
    return 0;
  }

  private long copy(RangeFlags.Range r, int target) throws Exception {
    AtomicReference<Exception> failed = new AtomicReference<>();
    AtomicLong acked = new AtomicLong();
    try (RecordReader reader = new RecordReader(kafka); KafkaProducer<byte[], byte[]> producer = producer()) {
      reader.read(r, rec -> {
        if (failed.get() != null) {
          throw ToolException.failure("writing to " + toTopic.get() + " failed: " + failed.get());
        }
        Long ts = keepTimestamps.get() ? rec.timestamp() : null;
        producer.send(new ProducerRecord<>(toTopic.get(), target, ts, rec.key(), rec.value(), rec.headers()),
            (md, e) -> {
              if (e != null) {
                failed.compareAndSet(null, e);
              } else {
                acked.incrementAndGet();
              }
            });
      });
      producer.flush();
    }
    if (failed.get() != null) {
      throw ToolException.failure("writing to " + toTopic.get() + " partition " + target + " failed after "
          + acked.get() + " records: " + failed.get());
    }
    return acked.get();
  }

  private KafkaProducer<byte[], byte[]> producer() {
    Properties p = kafka.base();
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "weir-tool-replay");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression.get());
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_REQUEST_BYTES);
    int ms = (int) kafka.timeout().toMillis();
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2 * ms); // must exceed linger + request timeout
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, ms);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return new KafkaProducer<>(p);
  }
}
