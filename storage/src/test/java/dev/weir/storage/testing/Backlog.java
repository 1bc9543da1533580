package dev.weir.storage.testing;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.ingest.RecordFormat;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A backlog of Weir records produced straight to a partition with record timestamps of the
 * samples' time, as if a distributor had written them over those hours; and the samples it holds,
 * to compare with what a consumer made of it.
 */
public final class Backlog {
  /** tenant → series as promtool prints it → "value timestamp" lines, in time order. */
  public final Map<String, Map<String, List<String>>> expected = new TreeMap<>();
  private final String bootstrap;

  public Backlog(String bootstrap) {
    this.bootstrap = bootstrap;
  }

  public static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return new KafkaProducer<>(p);
  }

  public static ProducerRecord<byte[], byte[]> record(String topic, int partition, long timestamp, String tenant,
      WriteRequest req) {
    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, partition, timestamp,
        tenant.getBytes(StandardCharsets.UTF_8), req.toByteArray());
    r.headers().add(new RecordHeader(RecordFormat.VERSION_HEADER, RecordFormat.VERSION.getBytes(StandardCharsets.UTF_8)));
    return r;
  }

  /**
   * Produces {@code series} series of tenant {@code tenant} into {@code partition}, one sample each
   * every {@code step} ms over {@code [from, to)}, one record per step holding every series.
   *
   * @return the number of records produced
   */
  public int produce(String topic, int partition, String tenant, int series, long from, long to, long step)
      throws Exception {
    int n = 0;
    try (KafkaProducer<byte[], byte[]> p = producer(bootstrap)) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (long t = from; t < to; t += step) {
        WriteRequest.Builder b = WriteRequest.newBuilder();
        for (int s = 0; s < series; s++) {
          double v = ((t - from) / step) * 0.25 + s;
          TimeSeries ts = TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("backlog_metric"))
              .addLabels(Label.newBuilder().setName("partition").setValue(String.valueOf(partition)))
              .addLabels(Label.newBuilder().setName("series").setValue(String.format("%04d", s)))
              .addSamples(Sample.newBuilder().setTimestamp(t).setValue(v)).build();
          b.addTimeseries(ts);
          expected.computeIfAbsent(tenant, k -> new TreeMap<>())
              .computeIfAbsent(Promtool.key(Labels.of("__name__", "backlog_metric", "partition",
                  String.valueOf(partition), "series", String.format("%04d", s))), k -> new ArrayList<>())
              .add(Promtool.format(v) + " " + t);
        }
        acks.add(p.send(record(topic, partition, t, tenant, b.build())));
        n++;
      }
      for (Future<RecordMetadata> f : acks) {
        f.get(60, TimeUnit.SECONDS);
      }
    }
    return n;
  }
}
