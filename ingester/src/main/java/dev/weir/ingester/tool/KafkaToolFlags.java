package dev.weir.ingester.tool;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.ingest.KafkaSecurity;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Kafka connection flags of the subcommands ({@code kafka.address}, SASL and TLS as in the
 * main binary's {@code ingest-storage.kafka.*}), and the clients built from them. The consumers
 * belong to no group, so a subcommand never commits an offset. Not thread-safe.
 */
final class KafkaToolFlags {
  private final Flag<String> address;
  private final Flag<Duration> timeout;
  private final Flag<String> saslMechanism;
  private final Flag<String> saslUsername;
  private final Flag<String> saslPassword;
  private final Flag<Boolean> tls;
  private final Flag<String> tlsCa;

  KafkaToolFlags(FlagSet fs) {
    address = fs.string("kafka.address", "", "Kafka bootstrap servers, host:port[,host:port] (required).");
    timeout = fs.duration("kafka.timeout", Duration.ofSeconds(30), "How long a Kafka request, or reading without"
        + " progress, may take before the command fails.");
    saslMechanism = fs.oneOf("kafka.sasl-mechanism", "", KafkaSecurity.MECHANISMS, "SASL mechanism: PLAIN,"
        + " SCRAM-SHA-256, SCRAM-SHA-512; empty for none.");
    saslUsername = fs.string("kafka.sasl-username", "", "SASL username (with kafka.sasl-mechanism).");
    saslPassword = fs.string("kafka.sasl-password", "", "SASL password (with kafka.sasl-mechanism).");
    tls = fs.bool("kafka.tls-enabled", false, "Connect to Kafka over TLS.");
    tlsCa = fs.string("kafka.tls-ca-path", "", "PEM file of CA certificates; empty for the JVM's trust store.");
  }

  /** Checks the flags; call before connecting. */
  void validate() throws ToolException {
    if (address.get().isBlank()) {
      throw ToolException.usage("--kafka.address is required");
    }
    if (!saslMechanism.get().isEmpty() && saslUsername.get().isEmpty()) {
      throw ToolException.usage("--kafka.sasl-username is required with --kafka.sasl-mechanism");
    }
  }

  String address() {
    return address.get();
  }

  Duration timeout() {
    return timeout.get();
  }

  /** Bootstrap servers and security. */
  Properties base() {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, address.get());
    new KafkaSecurity(saslMechanism.get(), saslUsername.get(), saslPassword.get(), tls.get(), tlsCa.get())
        .applyTo(p);
    return p;
  }

  Admin admin() {
    Properties p = base();
    int ms = (int) timeout.get().toMillis();
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, "weir-tool");
    return Admin.create(p);
  }

  /** A consumer for {@code assign()} + {@code seek()} without a group: it cannot commit. */
  KafkaConsumer<byte[], byte[]> consumer() {
    Properties p = base();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "weir-tool");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.get().toMillis());
    p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.get().toMillis());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return new KafkaConsumer<>(p);
  }
}
