package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.testing.KafkaBroker;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The block-builder's backlog on a partition, read from a real broker: unknown without a commit
 * on a partition with records, end minus committed offset after commits, 0 on an empty partition,
 * unknown when Kafka does not answer.
 */
class BlockBuilderBacklogIT {
  @Test
  void backlogIsTheEndOffsetMinusTheGroupsCommittedOffset() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "weir-bb-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "block-builder-" + topic;
    broker.createTopic(topic, 2);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>(topic, 1, null, new byte[] {(byte) i})).get(30, TimeUnit.SECONDS);
      }
    }
    KafkaConfig kafka = KafkaConfig.defaults(broker.bootstrap(), topic, "unused");
    BlockBuilderBacklog one = new BlockBuilderBacklog(kafka, group, 1);
    assertThat(one.getAsLong()).as("no commit yet on a partition with records").isEqualTo(-1);
    assertThat(new BlockBuilderBacklog(kafka, group, 0).getAsLong()).as("empty partition").isZero();

    TopicPartition tp = new TopicPartition(topic, 1);
    try (Admin admin = broker.admin()) {
      admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(3))).all().get(30, TimeUnit.SECONDS);
      assertThat(one.getAsLong()).isEqualTo(2);
      admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(5))).all().get(30, TimeUnit.SECONDS);
      assertThat(one.getAsLong()).isZero();
    }
    KafkaConfig nowhere = KafkaConfig.defaults("127.0.0.1:1", topic, "unused");
    assertThat(new BlockBuilderBacklog(nowhere, group, 1).getAsLong()).as("Kafka unreachable").isEqualTo(-1);
  }
}
