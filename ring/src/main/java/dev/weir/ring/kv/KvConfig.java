package dev.weir.ring.kv;

import java.time.Duration;
import java.util.List;

/**
 * Which KV store holds the rings, and how to reach etcd.
 *
 * @param store "inmemory" (single process, the default) or "etcd"
 * @param prefix prepended to every key (Mimir's default is {@code collectors/})
 * @param etcdEndpoints {@code host:port} or {@code http(s)://host:port} (see {@link EtcdEndpoints})
 * @param dialTimeout connection and request timeout
 * @param maxRetries CAS attempts on conflicts before giving up
 * @param tlsEnabled use TLS to etcd
 * @param tlsCertPath client certificate (PEM), or empty
 * @param tlsKeyPath client key (PEM), or empty
 * @param tlsCaPath CA to verify etcd, or empty for the system's
 * @param tlsInsecureSkipVerify do not verify etcd's certificate
 * @param username etcd user, or empty for none
 * @param password etcd password
 */
public record KvConfig(String store, String prefix, List<String> etcdEndpoints, Duration dialTimeout,
    int maxRetries, boolean tlsEnabled, String tlsCertPath, String tlsKeyPath, String tlsCaPath,
    boolean tlsInsecureSkipVerify, String username, String password) {

  public static final List<String> STORES = List.of("inmemory", "etcd");

  public static KvConfig inMemory() {
    return new KvConfig("inmemory", "collectors/", List.of(), Duration.ofSeconds(10), 10, false, "", "", "",
        false, "", "");
  }

  public static KvConfig etcd(String prefix, List<String> endpoints) {
    return new KvConfig("etcd", prefix, endpoints, Duration.ofSeconds(10), 10, false, "", "", "", false, "", "");
  }

  public KvConfig withDialTimeout(Duration d) {
    return new KvConfig(store, prefix, etcdEndpoints, d, maxRetries, tlsEnabled, tlsCertPath, tlsKeyPath, tlsCaPath,
        tlsInsecureSkipVerify, username, password);
  }

  /** Opens the configured store. */
  public KvStore open(KvMetrics metrics) {
    return switch (store) {
      case "inmemory" -> new InMemoryKvStore();
      case "etcd" -> new EtcdKvStore(this, metrics);
      default -> throw new IllegalArgumentException("unknown KV store " + store);
    };
  }
}
