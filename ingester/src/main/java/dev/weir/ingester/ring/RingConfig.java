package dev.weir.ingester.ring;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ring.kv.EtcdEndpoints;
import dev.weir.ring.kv.KvConfig;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;

/**
 * Ring membership settings, with Mimir's {@code ingester.ring.*} flag names.
 *
 * @param kv where the rings live
 * @param instanceAddr host the ring advertises for this instance (empty: first non-loopback IPv4)
 * @param instancePort port the ring advertises (0: the gRPC listen port)
 * @param zone availability zone
 */
public record RingConfig(KvConfig kv, Duration heartbeatPeriod, Duration heartbeatTimeout, boolean unregisterOnShutdown,
    String instanceAddr, int instancePort, String zone, int numTokens) {

  public static final String INSTANCE_RING_KEY = "ingester";
  public static final String PARTITION_RING_KEY = "ingester-partitions";
  /** Store-gateways register here, in the same KV store as the ingesters (Mimir's store-gateway ring). */
  public static final String STORE_GATEWAY_RING_KEY = "store-gateway";
  /** The distributors' ring (global ingestion-rate strategy). */
  public static final String DISTRIBUTOR_RING_KEY = "distributor";

  /** The address to advertise, {@code host:port}. */
  public String advertisedAddress(int grpcPort) {
    String host = instanceAddr.isEmpty() ? firstNonLoopbackIpv4() : instanceAddr;
    return host + ":" + (instancePort == 0 ? grpcPort : instancePort);
  }

  static String firstNonLoopbackIpv4() {
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp() || nic.isLoopback()) {
          continue;
        }
        for (InetAddress a : Collections.list(nic.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            return a.getHostAddress();
          }
        }
      }
    } catch (SocketException e) {
      // fall through
    }
    return "127.0.0.1";
  }

  /** Flag definitions for {@link RingConfig}. */
  public static final class Flags {
    private final Flag<String> store;
    private final Flag<String> prefix;
    private final Flag<List<String>> endpoints;
    private final Flag<Duration> dialTimeout;
    private final Flag<Integer> maxRetries;
    private final Flag<Boolean> tls;
    private final Flag<String> cert;
    private final Flag<String> key;
    private final Flag<String> ca;
    private final Flag<Boolean> insecure;
    private final Flag<String> username;
    private final Flag<String> password;
    private final Flag<Duration> heartbeatPeriod;
    private final Flag<Duration> heartbeatTimeout;
    private final Flag<Boolean> unregister;
    private final Flag<String> addr;
    private final Flag<Integer> port;
    private final Flag<String> zone;
    private final Flag<Integer> tokens;

    public Flags(FlagSet fs) {
      String p = "ingester.ring.";
      store = fs.oneOf(p + "store", "inmemory", KvConfig.STORES,
          "Backend storage for the rings: inmemory (a single process) or etcd (a fleet).");
      prefix = fs.string(p + "prefix", "collectors/", "Prefix for the keys of the rings in the KV store.");
      endpoints = fs.list(p + "etcd.endpoints", List.of(), "The etcd endpoints to connect to, comma-separated: host:port (e.g. etcd:2379; https:// when"
          + " TLS is enabled, else http://) or http(s)://host:port.");
      dialTimeout = fs.duration(p + "etcd.dial-timeout", Duration.ofSeconds(10),
          "The dial timeout for the etcd connection, also used as the request timeout.");
      maxRetries = fs.integer(p + "etcd.max-retries", 10,
          "The maximum number of retries of a compare-and-swap that lost to a concurrent writer.");
      tls = fs.bool(p + "etcd.tls-enabled", false, "Enable TLS to etcd.");
      cert = fs.string(p + "etcd.tls-cert-path", "", "Path to the client certificate file (PEM) for etcd.");
      key = fs.string(p + "etcd.tls-key-path", "", "Path to the client key file (PEM) for etcd.");
      ca = fs.string(p + "etcd.tls-ca-path", "", "Path to the CA certificates file to validate etcd's certificate.");
      insecure = fs.bool(p + "etcd.tls-insecure-skip-verify", false, "Skip validating etcd's certificate.");
      username = fs.string(p + "etcd.username", "", "etcd username.");
      password = fs.string(p + "etcd.password", "", "etcd password.");
      heartbeatPeriod = fs.duration(p + "heartbeat-period", Duration.ofSeconds(15),
          "Period at which to heartbeat to the ring.");
      heartbeatTimeout = fs.duration(p + "heartbeat-timeout", Duration.ofMinutes(1),
          "An instance whose last heartbeat is older than this is unhealthy to ring readers.");
      unregister = fs.bool(p + "unregister-on-shutdown", true,
          "Remove the instance from the ring on shutdown. When false it stays (LEAVING) with its tokens, for"
              + " a restart in place.");
      addr = fs.string(p + "instance-addr", "", "IP address to advertise in the ring; empty picks the first"
          + " non-loopback IPv4 address.");
      port = fs.integer(p + "instance-port", 0, "Port to advertise in the ring; 0 uses the gRPC listen port.");
      zone = fs.string(p + "instance-availability-zone", "", "The availability zone of this instance.");
      tokens = fs.integer(p + "num-tokens", 128, "Number of tokens this instance owns in the ring.");
    }

    public RingConfig build() throws ConfigException {
      if (store.get().equals("etcd") && endpoints.get().isEmpty()) {
        throw new ConfigException("ingester.ring.etcd.endpoints is required with ingester.ring.store=etcd");
      }
      try {
        EtcdEndpoints.normalize(endpoints.get(), tls.get());
      } catch (IllegalArgumentException e) {
        throw new ConfigException("ingester.ring.etcd.endpoints: " + e.getMessage());
      }
      if (heartbeatPeriod.get().toMillis() < 1 || heartbeatTimeout.get().compareTo(heartbeatPeriod.get()) <= 0) {
        throw new ConfigException("ingester.ring.heartbeat-timeout must be longer than ingester.ring.heartbeat-period");
      }
      if (tokens.get() < 1 || tokens.get() > 4096) {
        throw new ConfigException("ingester.ring.num-tokens must be in [1, 4096]");
      }
      if (tls.get() && cert.get().isEmpty() != key.get().isEmpty()) {
        throw new ConfigException("ingester.ring.etcd.tls-cert-path and tls-key-path go together");
      }
      KvConfig kv = new KvConfig(store.get(), prefix.get(), endpoints.get(), dialTimeout.get(), maxRetries.get(),
          tls.get(), cert.get(), key.get(), ca.get(), insecure.get(), username.get(), password.get());
      return new RingConfig(kv, heartbeatPeriod.get(), heartbeatTimeout.get(), unregister.get(), addr.get(), port.get(),
          zone.get(), tokens.get());
    }
  }
}
