package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.testing.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The distributor's writer across a broker outage (a private broker, stopped and restarted). */
class WriterIT {
  static WriteRequest sample(long t) {
    return WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("m"))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1))).build();
  }

  static long end(KafkaBroker broker, String topic) throws Exception {
    try (var admin = broker.admin()) {
      TopicPartition tp = new TopicPartition(topic, 0);
      return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
    }
  }

  @Test
  void aWriteDuringAnOutageFailsRetryablyWithinTheTimeoutAndWritesWorkAfterTheBrokerReturns() throws Exception {
    try (KafkaBroker broker = KafkaBroker.start(Files.createTempDirectory("weir-kafka-writer"))) {
      String topic = "writer-outage";
      broker.createTopic(topic, 3);
      KafkaConfig config = KafkaConfig.defaults(broker.bootstrap(), topic, "g");
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (Writer w = new Writer(config, new WriterMetrics(registry))) {
        w.write("t", Map.of(0, sample(1)));
        assertThat(end(broker, topic)).isEqualTo(1);

        broker.stop();
        try {
          for (int i = 0; i < 2; i++) { // the second write finds no cached connection either
            long start = System.nanoTime();
            assertThatThrownBy(() -> w.write("t", Map.of(0, sample(2))))
                .isInstanceOf(ServerErrorException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThanOrEqualTo(config.writeTimeout().plusSeconds(1));
          }
          // A writer started during the outage has no metadata: every send() blocks for it, yet
          // a write to three partitions still fails within one write timeout, not three.
          try (Writer fresh = new Writer(config, new WriterMetrics(registry))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> fresh.write("t", Map.of(0, sample(5), 1, sample(5), 2, sample(5))))
                .isInstanceOf(ServerErrorException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThanOrEqualTo(config.writeTimeout().plusSeconds(1));
          }
        } finally {
          broker.restart();
        }
        await().atMost(60, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() ->
            w.write("t", Map.of(0, sample(3))));
        w.write("t", Map.of(0, sample(4)));
      }
      assertThat(registry.get("weir.ingest.storage.writer.failures").counter().count()).isGreaterThanOrEqualTo(2);
      // The first write and the two after the outage landed; a failed write may have landed too
      // (the client retries it; an identical sample is stored once), but nothing is lost.
      assertThat(end(broker, topic)).isBetween(3L, 5L + 60);
    }
  }

  /** A request whose label text repeats, as real remote write requests' does (~35 KB). */
  static WriteRequest repetitive(long t) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int i = 0; i < 400; i++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("http_requests_total"))
          .addLabels(Label.newBuilder().setName("instance").setValue("10.0.0." + (i % 250) + ":9100"))
          .addLabels(Label.newBuilder().setName("job").setValue("kubernetes-pods"))
          .addLabels(Label.newBuilder().setName("pod").setValue("api-server-" + i))
          .addSamples(Sample.newBuilder().setTimestamp(t).setValue(i)));
    }
    return b.build();
  }

  @Test
  void everyCodecIsReadBackAsWrittenAndTheCompressedOnesShrinkTheLog() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    Map<String, Long> logBytes = new java.util.TreeMap<>();
    for (String codec : KafkaConfig.COMPRESSIONS) {
      String topic = "writer-codec-" + codec + "-" + System.nanoTime();
      broker.createTopic(topic, 1);
      KafkaConfig config = KafkaConfig.defaults(broker.bootstrap(), topic, "g").withProducerCompression(codec);
      java.util.List<WriteRequest> written = new java.util.ArrayList<>();
      try (Writer w = new Writer(config, WriterMetrics.noop())) {
        for (int i = 0; i < 10; i++) {
          written.add(repetitive(i));
          w.write("tenant-" + codec, Map.of(0, written.get(i)));
        }
      }
      TopicPartition tp = new TopicPartition(topic, 0);
      java.util.List<RecordFormat.Decoded> read = new java.util.ArrayList<>();
      try (var consumer = AssignedConsumers.create(config.clientProperties(), "codec-" + codec, "g-" + codec,
          Duration.ofSeconds(10))) {
        consumer.assign(java.util.List.of(tp));
        consumer.seekToBeginning(java.util.List.of(tp));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (read.size() < written.size() && System.nanoTime() < deadline) {
          for (var r : consumer.poll(Duration.ofMillis(200))) {
            read.add(RecordFormat.decode(r.key(), r.value(), r.headers()));
          }
        }
      }
      assertThat(read).as(codec).hasSize(written.size());
      for (int i = 0; i < written.size(); i++) {
        assertThat(read.get(i).tenant()).isEqualTo("tenant-" + codec);
        assertThat(read.get(i).request()).as("%s record %d", codec, i).isEqualTo(written.get(i));
      }
      logBytes.put(codec, broker.partitionBytes(topic, 0));
    }
    long plain = logBytes.get("none");
    assertThat(plain).as("ten ~35 KB records").isGreaterThan(10L * repetitive(0).getSerializedSize());
    for (String codec : KafkaConfig.COMPRESSIONS) {
      if (!codec.equals("none")) {
        assertThat(logBytes.get(codec)).as("%s against none: %s", codec, logBytes).isLessThan(plain / 2);
      }
    }
  }
}
