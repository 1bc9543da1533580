package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.testing.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Permanent dead-letter failures against a real broker (topic auto-creation is off there). */
class DeadLetterProducerIT {
  KafkaBroker broker;
  String dlq;

  @BeforeEach
  void setUp() throws Exception {
    broker = KafkaBroker.shared();
    dlq = "dlq-" + UUID.randomUUID();
  }

  static ConsumerRecord<byte[], byte[]> poison(byte[] value) {
    RecordHeaders h = new RecordHeaders();
    h.add(new RecordHeader("weir-version", "1".getBytes(StandardCharsets.UTF_8)));
    return new ConsumerRecord<>("ingest", 3, 42L, 1L, TimestampType.CREATE_TIME, 6, value.length,
        "tenant".getBytes(StandardCharsets.UTF_8), value, h, java.util.Optional.empty());
  }

  DeadLetterProducer producer() {
    Properties p = new Properties();
    p.put("bootstrap.servers", broker.bootstrap());
    return new DeadLetterProducer(p, dlq, 1 << 20, Duration.ofSeconds(3));
  }

  List<ConsumerRecord<byte[], byte[]>> readAll(int expected) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
      TopicPartition tp = new TopicPartition(dlq, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      await().atMost(30, TimeUnit.SECONDS).until(() -> {
        c.poll(Duration.ofMillis(200)).forEach(out::add);
        return out.size() >= expected;
      });
    }
    return out;
  }

  static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  @Test
  void aRecordTooLargeForTheTopicIsKeptTruncatedWithItsSizeAndTheError() throws Exception {
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic(dlq, 1, (short) 1).configs(Map.of("max.message.bytes", "4096"))))
          .all().get(30, TimeUnit.SECONDS);
    }
    byte[] value = new byte[100_000];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) (i * 31);
    }
    try (DeadLetterProducer p = producer()) {
      p.send(poison(value), "undecodable");
      assertThat(p.permanentFailure()).isNull();
    }
    List<ConsumerRecord<byte[], byte[]>> dead = readAll(1);
    assertThat(dead).hasSize(1);
    ConsumerRecord<byte[], byte[]> r = dead.get(0);
    assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("tenant");
    assertThat(r.value().length).isLessThan(4096).isPositive();
    assertThat(r.value()).isEqualTo(java.util.Arrays.copyOf(value, r.value().length));
    assertThat(header(r, "weir-version")).isEqualTo("1");
    assertThat(header(r, "weir-dlq-source-offset")).isEqualTo("42");
    assertThat(header(r, "weir-dlq-error")).isEqualTo("undecodable");
    assertThat(header(r, DeadLetterProducer.ORIGINAL_SIZE_HEADER)).isEqualTo("100000");
    assertThat(header(r, DeadLetterProducer.SEND_ERROR_HEADER)).contains("too large");
  }

  @Test
  void aMissingTopicIsAPermanentFailureUntilItExists() throws Exception {
    try (DeadLetterProducer p = producer()) {
      assertThatThrownBy(() -> p.send(poison(new byte[] {1, 2, 3}), "undecodable"))
          .isInstanceOf(DeadLetterProducer.PermanentFailure.class).hasMessageContaining("does not exist");
      assertThat(p.permanentFailure()).contains(dlq).contains("does not exist");

      broker.createTopic(dlq, 1);
      await().atMost(30, TimeUnit.SECONDS).ignoreExceptions().untilAsserted(() -> {
        p.send(poison(new byte[] {1, 2, 3}), "undecodable");
      });
      assertThat(p.permanentFailure()).isNull();
    }
    assertThat(readAll(1).get(0).value()).containsExactly(1, 2, 3);
  }
}
