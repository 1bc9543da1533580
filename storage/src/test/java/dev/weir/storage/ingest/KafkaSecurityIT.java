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
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Weir's Kafka clients through a SASL/PLAIN listener of the real broker. */
class KafkaSecurityIT {
  @TempDir Path dir;

  static WriteRequest one(long t) {
    return WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("sasl_test"))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1))).build();
  }

  @Test
  void writerAndReaderAuthenticateWithSaslPlain() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = "sasl-" + UUID.randomUUID();
    KafkaConfig cfg = KafkaConfig.defaults(broker.saslBootstrap(), topic, "g-" + UUID.randomUUID())
        .withSecurity(new KafkaSecurity("PLAIN", KafkaBroker.SASL_USER, KafkaBroker.SASL_PASSWORD, false, ""))
        .withMaxLagAtStartup(Duration.ZERO);
    Writer.ensureTopic(cfg);
    try (Writer w = new Writer(cfg, WriterMetrics.noop())) {
      w.write("t", Map.of(0, one(1000)));
    }
    RecordingPusher pusher = new RecordingPusher();
    PartitionReader r = new PartitionReader(cfg, 0, dir, pusher, () -> { }, ReaderMetrics.noop(0),
        System::currentTimeMillis);
    r.start();
    try {
      await().atMost(30, TimeUnit.SECONDS).until(() -> pusher.total.get() == 1);
    } finally {
      r.stop(Duration.ofSeconds(10));
    }

    // A wrong password is refused by the broker: the write fails as a server error.
    KafkaConfig wrong = cfg.withSecurity(new KafkaSecurity("PLAIN", KafkaBroker.SASL_USER, "nope", false, ""));
    try (Writer w = new Writer(wrong, WriterMetrics.noop())) {
      assertThatThrownBy(() -> w.write("t", Map.of(0, one(2000)))).isInstanceOf(ServerErrorException.class);
    }
  }

  @Test
  void propertiesFollowTheMechanismAndTls() {
    Properties p = new Properties();
    new KafkaSecurity("SCRAM-SHA-512", "u", "p\"w", true, "/ca.pem").applyTo(p);
    assertThat(p).containsEntry("security.protocol", "SASL_SSL").containsEntry("sasl.mechanism", "SCRAM-SHA-512")
        .containsEntry("ssl.truststore.type", "PEM").containsEntry("ssl.truststore.location", "/ca.pem");
    assertThat((String) p.get("sasl.jaas.config")).isEqualTo(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\\\"w\";");
    Properties none = new Properties();
    KafkaSecurity.NONE.applyTo(none);
    assertThat(none).containsOnly(Map.entry("security.protocol", "PLAINTEXT"));
    assertThat(new KafkaSecurity("PLAIN", "u", "secret", false, "").toString()).doesNotContain("secret");
  }
}
