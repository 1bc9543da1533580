package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.OwnerState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.testing.KafkaBroker;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * On a real broker: the lag of partitions this process does not consume comes from their end
 * offsets and their owners' committed offsets, the slowest owner's; a partition whose owners never
 * committed is unknown; a new round happens only after the interval.
 */
class PartitionLagsIT {
  @Test
  void showsOtherPartitionsLagFromTheOwnersCommittedOffsets() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "lags-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(topic, 2);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>(topic, 1, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
      }
      producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
    }
    try (Admin admin = broker.admin()) {
      TopicPartition one = new TopicPartition(topic, 1);
      admin.alterConsumerGroupOffsets("ingester-zone-a-1", Map.of(one, new OffsetAndMetadata(7)))
          .all().get(30, TimeUnit.SECONDS);
      admin.alterConsumerGroupOffsets("ingester-zone-b-1", Map.of(one, new OffsetAndMetadata(4)))
          .all().get(30, TimeUnit.SECONDS);
    }
    PartitionRing ring = new PartitionRing(PartitionRingDesc.newBuilder()
        .putPartitions(0, PartitionDesc.newBuilder().setId(0).setState(PartitionState.PARTITION_ACTIVE).build())
        .putPartitions(1, PartitionDesc.newBuilder().setId(1).setState(PartitionState.PARTITION_ACTIVE).build())
        .putOwners("ingester-zone-a-0", owner(0))
        .putOwners("ingester-zone-a-1", owner(1))
        .putOwners("ingester-zone-b-1", owner(1))
        .build());
    AtomicLong clock = new AtomicLong(1_000_000);
    KafkaConfig kafka = KafkaConfig.defaults(broker.bootstrap(), topic, "");
    try (PartitionLags lags = new PartitionLags(kafka, () -> ring, owner -> owner, clock::get,
        Duration.ofSeconds(10))) {
      assertThat(lags.records(1)).as("10 records, the slower zone committed 4").isEqualTo(6);
      assertThat(lags.records(0)).as("its owner never committed").isEqualTo(-1);
      try (Admin admin = broker.admin()) {
        admin.alterConsumerGroupOffsets("ingester-zone-b-1", Map.of(new TopicPartition(topic, 1),
            new OffsetAndMetadata(10))).all().get(30, TimeUnit.SECONDS);
      }
      clock.addAndGet(9_999);
      assertThat(lags.records(1)).as("cached within the interval").isEqualTo(6);
      clock.addAndGet(1);
      assertThat(lags.records(1)).as("zone a is now the slowest").isEqualTo(3);
    }
  }

  private static OwnerDesc owner(int partition) {
    return OwnerDesc.newBuilder().setOwnedPartition(partition).setState(OwnerState.OWNER_ACTIVE).build();
  }
}
