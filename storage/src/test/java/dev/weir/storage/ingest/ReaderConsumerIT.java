package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.testing.KafkaBroker;
import dev.weir.storage.wire.WireSeries;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * A partition reader's consumer hands a record's value over as a view of the bytes Kafka fetched or
 * decompressed, without a copy ({@link AssignedConsumers#createReader}); the pipeline decodes it
 * while the consumer goes on polling. On a real broker, for every codec: the views are not copies,
 * each still holds its record after many more fetches, and only a slice of a whole (uncompressed)
 * fetch is copied before it is held ({@link AssignedConsumers#unpinned}).
 */
class ReaderConsumerIT {
  @Test
  void recordViewsStayIntactWhileTheConsumerFetchesOnAndAreNotCopies() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    for (String codec : KafkaConfig.COMPRESSIONS) {
      String topic = "reader-views-" + codec + "-" + System.nanoTime();
      broker.createTopic(topic, 1);
      KafkaConfig config = KafkaConfig.defaults(broker.bootstrap(), topic, "g").withProducerCompression(codec);
      List<WriteRequest> written = new ArrayList<>();
      try (Writer w = new Writer(config, WriterMetrics.noop())) {
        for (int i = 0; i < 40; i++) {
          written.add(WriterIT.repetitive(1_000L * i));
          w.write("tenant-" + codec, Map.of(0, written.get(i)));
        }
      }
      TopicPartition tp = new TopicPartition(topic, 0);
      List<ConsumerRecord<byte[], ByteBuffer>> held = new ArrayList<>();
      int polls = 0;
      // Small fetches (a few records each, ~35 KB apiece before compression): many fetches and polls.
      int fetchBytes = codec.equals("none") ? 256 << 10 : 8 << 10;
      try (var consumer = AssignedConsumers.createReader(config.clientProperties(), "views-" + codec, "g-" + codec,
          Duration.ofSeconds(10), fetchBytes)) {
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (held.size() < written.size() && System.nanoTime() < deadline) {
          var records = consumer.poll(Duration.ofMillis(200));
          polls += records.isEmpty() ? 0 : 1;
          records.forEach(held::add);
        }
      }
      assertThat(held).as(codec).hasSize(written.size());
      assertThat(polls).as("%s: records over several polls", codec).isGreaterThan(3);
      Map<byte[], Integer> arrays = new IdentityHashMap<>();
      for (int i = 0; i < held.size(); i++) {
        ByteBuffer v = held.get(i).value();
        assertThat(v.hasArray()).isTrue();
        assertThat(v.array().length).as("%s record %d: a view inside what Kafka read, not a copy", codec, i)
            .isGreaterThan(v.remaining());
        arrays.merge(v.array(), 1, Integer::sum);
        ConsumerRecord<byte[], ByteBuffer> held1 = AssignedConsumers.unpinned(held.get(i));
        if (codec.equals("none")) {
          assertThat(held1.value().array().length).as("a slice of a whole fetch is copied before it is held")
              .isEqualTo(v.remaining());
          assertThat(held1.value()).isEqualTo(v);
        } else {
          assertThat(held1).as("%s: a decompressed record's own buffer is held as it is", codec)
              .isSameAs(held.get(i));
        }
        // Decoded only now, after every later fetch: the bytes under the view did not change.
        RecordFormat.DecodedWire d = RecordFormat.decodeWire(held.get(i).key(), v, held.get(i).headers(),
            new WireSeries());
        assertThat(d.tenant()).isEqualTo("tenant-" + codec);
        assertThat(d.batch().toWriteRequest()).as("%s record %d", codec, i).isEqualTo(written.get(i));
      }
      if (codec.equals("none")) {
        assertThat(arrays.values()).as("uncompressed: records share their fetch's buffer").anyMatch(n -> n > 1);
      }
    }
  }
}
