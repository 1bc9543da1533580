package dev.weir.storage.ingest;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.testing.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the partition reader ITs share: a topic and group of their own on the shared broker (a
 * test may start its own broker instead), readers on partition 0 stopped after each test, and
 * records of {@code series} series with one sample each produced through the real {@link Writer}.
 */
abstract class ReaderITBase {
  @TempDir Path dir;
  final List<PartitionReader> readers = new ArrayList<>();
  final List<AutoCloseable> closeables = new ArrayList<>();
  KafkaBroker broker;
  String topic = "t-" + UUID.randomUUID();
  String group = "g-" + UUID.randomUUID();

  KafkaBroker broker() throws Exception {
    if (broker == null) {
      broker = KafkaBroker.shared();
    }
    return broker;
  }

  KafkaConfig config(int concurrency) throws Exception {
    return KafkaConfig.defaults(broker().bootstrap(), topic, group).withConcurrency(concurrency, 50)
        .withMaxLagAtStartup(Duration.ofSeconds(5));
  }

  @AfterEach
  void stopReaders() throws Exception {
    readers.forEach(r -> r.stop(Duration.ofSeconds(10)));
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  PartitionReader reader(KafkaConfig cfg, RecordingPusher pusher, ReaderMetrics metrics) {
    PartitionReader r = new PartitionReader(cfg, 0, dir, pusher, () -> { }, metrics, System::currentTimeMillis);
    readers.add(r);
    r.start();
    return r;
  }

  void stop(PartitionReader r) {
    r.stop(Duration.ofSeconds(10));
    readers.remove(r);
  }

  /** Produces records [from, to): each has {@code series} series with one sample at t = offset. */
  void produce(KafkaConfig cfg, int from, int to, int series) {
    produce(cfg, from, to, series, 0);
  }

  /** Records [from, to): each has {@code series} series with one sample at t = base + k, value k. */
  void produce(KafkaConfig cfg, int from, int to, int series, long base) {
    try (Writer w = new Writer(cfg, WriterMetrics.noop())) {
      for (int k = from; k < to; k++) {
        WriteRequest.Builder b = WriteRequest.newBuilder();
        for (int s = 0; s < series; s++) {
          b.addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("m"))
              .addLabels(Label.newBuilder().setName("s").setValue(String.valueOf(s)))
              .addSamples(Sample.newBuilder().setTimestamp(base + k).setValue(k)));
        }
        w.write("tenant", Map.of(0, b.build()));
      }
    }
  }

  /** The offset {@code g} committed for partition 0, or -1. */
  long committed(String g) throws Exception {
    try (Admin a = broker().admin()) {
      OffsetAndMetadata o = a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS)
          .get(new TopicPartition(topic, 0));
      return o == null ? -1 : o.offset();
    }
  }

  long committed() throws Exception {
    return committed(group);
  }
}
