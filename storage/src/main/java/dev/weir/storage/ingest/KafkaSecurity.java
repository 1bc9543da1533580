package dev.weir.storage.ingest;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * How Weir's Kafka clients authenticate and encrypt: SASL (PLAIN or SCRAM) with a username and
 * password, TLS with an optional CA bundle (PEM). Applied to every producer, consumer and admin
 * client.
 *
 * @param saslMechanism empty (no SASL), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
 * @param caPath PEM file of CA certificates to trust; empty for the JVM's default trust store
 */
public record KafkaSecurity(String saslMechanism, String username, String password, boolean tls, String caPath) {
  public static final List<String> MECHANISMS = List.of("", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");
  public static final KafkaSecurity NONE = new KafkaSecurity("", "", "", false, "");

  public KafkaSecurity {
    if (!MECHANISMS.contains(saslMechanism)) {
      throw new IllegalArgumentException("unsupported SASL mechanism: " + saslMechanism);
    }
  }

  /** Sets the security properties on a client configuration. */
  public void applyTo(Properties p) {
    boolean sasl = !saslMechanism.isEmpty();
    String protocol = sasl ? (tls ? "SASL_SSL" : "SASL_PLAINTEXT") : (tls ? "SSL" : "PLAINTEXT");
    p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
    if (sasl) {
      String module = saslMechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
          : "org.apache.kafka.common.security.scram.ScramLoginModule";
      p.put(SaslConfigs.SASL_MECHANISM, saslMechanism);
      p.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + jaas(username) + "\" password=\""
          + jaas(password) + "\";");
    }
    if (tls && !caPath.isEmpty()) {
      p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
      p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, caPath);
    }
  }

  /** The same properties as a map (for tools that take one). */
  public Map<String, Object> asMap() {
    Properties p = new Properties();
    applyTo(p);
    Map<String, Object> m = new java.util.HashMap<>();
    p.forEach((k, v) -> m.put((String) k, v));
    return m;
  }

  private static String jaas(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  @Override
  public String toString() {
    return "KafkaSecurity[sasl=" + (saslMechanism.isEmpty() ? "none" : saslMechanism) + ", username=" + username
        + ", password=" + (password.isEmpty() ? "" : "<redacted>") + ", tls=" + tls + ", caPath=" + caPath + "]";
  }
}
