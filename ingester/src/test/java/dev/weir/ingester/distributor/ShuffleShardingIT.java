package dev.weir.ingester.distributor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.ring.partition.PartitionTokens;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.testing.KafkaBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Shuffle sharding on the real write path: the Kafka distributor produces a tenant's series only
 * to the partitions of its shuffle shard ({@code ingestion_partitions_tenant_shard_size}), seen
 * as the end offsets of the real topic's partitions; a tenant without a shard size reaches every
 * ACTIVE partition; a partition added to the ring changes a sharded tenant's partitions by at
 * most that one.
 */
class ShuffleShardingIT {
  static final long NOW = System.currentTimeMillis();

  @Test
  void aShardedTenantsSeriesReachOnlyItsShardsPartitions() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "shuffle-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(topic, 7);
    Map<Integer, int[]> tokens = new HashMap<>();
    PartitionRingDesc.Builder desc = PartitionRingDesc.newBuilder();
    for (int p = 0; p < 6; p++) {
      addActive(desc, tokens, p);
    }
    AtomicReference<PartitionRing> ring = new AtomicReference<>(new PartitionRing(desc.build()));
    Limits sharded = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0, 0, 200_000, Duration.ZERO, 2);
    try (Writer writer = new Writer(KafkaConfig.defaults(broker.bootstrap(), topic, "unused"), WriterMetrics.noop())) {
      KafkaDistributor distributor = new KafkaDistributor(t -> t.equals("noisy") ? sharded : Limits.DEFAULT,
          ring::get, () -> writer, new IngesterMetrics(new SimpleMeterRegistry(), () -> NOW, 1_200_000), () -> NOW);

      Map<Integer, Long> before = endOffsets(broker, topic);
      distributor.push("noisy", series("noisy_metric", 600));
      Set<Integer> noisy = grown(before, endOffsets(broker, topic));
      Set<Integer> shard = new TreeSet<>(ring.get().shuffleShard("noisy", 2).activePartitions());
      assertThat(noisy).as("600 series of the sharded tenant").isEqualTo(shard).hasSize(2);

      before = endOffsets(broker, topic);
      distributor.push("everyone", series("spread_metric", 600));
      assertThat(grown(before, endOffsets(broker, topic))).as("a tenant without shard size")
          .containsExactly(0, 1, 2, 3, 4, 5);

      addActive(desc, tokens, 6);
      ring.set(new PartitionRing(desc.build()));
      before = endOffsets(broker, topic);
      distributor.push("noisy", series("noisy_metric", 600));
      Set<Integer> after = grown(before, endOffsets(broker, topic));
      assertThat(after).as("after scale-out to 7 partitions (was %s)", shard).hasSize(2);
      Set<Integer> added = new HashSet<>(after);
      added.removeAll(shard);
      assertThat(added).as("only the new partition may join the shard").isSubsetOf(Set.of(6));
    }
  }

  private static void addActive(PartitionRingDesc.Builder desc, Map<Integer, int[]> tokens, int p) {
    int[] t = PartitionTokens.forNewPartition(tokens, 128);
    tokens.put(p, t);
    desc.putPartitions(p, PartitionDesc.newBuilder().setId(p).setState(PartitionState.PARTITION_ACTIVE)
        .addAllTokens(Arrays.stream(t).boxed().toList()).build());
  }

  static WriteRequest series(String metric, int n) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int i = 0; i < n; i++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue(metric))
          .addLabels(Label.newBuilder().setName("pod").setValue("pod-" + i))
          .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(i)));
    }
    return b.build();
  }

  static Set<Integer> grown(Map<Integer, Long> before, Map<Integer, Long> after) {
    return after.entrySet().stream().filter(e -> e.getValue() > before.get(e.getKey())).map(Map.Entry::getKey)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  static Map<Integer, Long> endOffsets(KafkaBroker broker, String topic) throws Exception {
    Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
    for (int p = 0; p < 7; p++) {
      ask.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<Integer, Long> out = new HashMap<>();
    try (Admin admin = broker.admin()) {
      admin.listOffsets(ask).all().get(30, TimeUnit.SECONDS).forEach((tp, r) -> out.put(tp.partition(), r.offset()));
    }
    return out;
  }
}
