package dev.weir.ingester.tool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.WeirProcess;
import dev.weir.storage.testing.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar weir.jar tool ...} as a child process: stdout, stderr and exit code of the real binary. */
class ToolProcessIT {
  @TempDir Path dir;

  @Test
  void offsetsRunsFromTheJar() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "tool-jar-" + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopic(topic, 1);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < 3; i++) {
        producer.send(new ProducerRecord<>(topic, 0, "t".getBytes(StandardCharsets.UTF_8), new byte[0])).get();
      }
    }

    Process ok = WeirProcess.runToExit(dir, "tool", "offsets", "--kafka.address", broker.bootstrap(), "--topic", topic);
    String out = new String(ok.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(ok.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(ok.exitValue()).as(err).isZero();
    assertThat(err).isEmpty();
    assertThat(out).isEqualTo("{\"topic\":\"" + topic + "\",\"partition\":0,\"start\":0,\"end\":3}\n");

    Process usage = WeirProcess.runToExit(dir, "tool", "dump", "--kafka.address", broker.bootstrap(), "--topic", topic);
    assertThat(usage.exitValue()).isEqualTo(2);
    assertThat(new String(usage.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("weir tool dump: --partition is required (and not negative)\n");
    assertThat(usage.getInputStream().readAllBytes()).isEmpty();
  }

  @Test
  void anUnreachableBrokerIsOneLineOnStderr() throws Exception {
    Process p = WeirProcess.runToExit(dir, "tool", "offsets", "--kafka.address=127.0.0.1:1", "--topic=t",
        "--kafka.timeout=2s");
    assertThat(p.exitValue()).isEqualTo(1);
    assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).lines())
        .singleElement().asString().startsWith("weir tool offsets: cannot describe topic t at 127.0.0.1:1: ");
  }
}
