package dev.weir.ingester.distributor;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.ring.RingConfig;
import java.time.Duration;
import java.util.List;

/**
 * Distributor settings that are not per-tenant limits: how the ingestion rate limit is shared,
 * and the distributor ring that the {@code global} strategy counts (Cortex's flag names).
 *
 * @param ingestionRateStrategy {@code local}: every distributor admits the whole
 *     {@code ingestion_rate}; {@code global}: the fleet does, each distributor its share
 * @param ringHeartbeatPeriod how often a distributor heartbeats into the distributor ring
 * @param ringHeartbeatTimeout a distributor whose heartbeat is older no longer counts
 */
public record DistributorConfig(String ingestionRateStrategy, Duration ringHeartbeatPeriod,
    Duration ringHeartbeatTimeout) {

  public static final String LOCAL = "local";
  public static final String GLOBAL = "global";

  public boolean global() {
    return ingestionRateStrategy.equals(GLOBAL);
  }

  /**
   * The distributor ring's membership settings: the KV store, prefix, advertised address and
   * zone of {@code ingester.ring.*}, with this config's heartbeats; one token (distributors own
   * nothing), removed from the ring on shutdown so the others take over its share at once.
   */
  public RingConfig ring(RingConfig ingesterRing) {
    return new RingConfig(ingesterRing.kv(), ringHeartbeatPeriod, ringHeartbeatTimeout, true,
        ingesterRing.instanceAddr(), ingesterRing.instancePort(), ingesterRing.zone(), 1);
  }

  /** Flag definitions for {@link DistributorConfig}. */
  public static final class Flags {
    private final Flag<String> strategy;
    private final Flag<Duration> heartbeatPeriod;
    private final Flag<Duration> heartbeatTimeout;

    public Flags(FlagSet fs) {
      strategy = fs.oneOf("distributor.ingestion-rate-limit-strategy", GLOBAL, List.of(LOCAL, GLOBAL),
          "How -distributor.ingestion-rate-limit (ingestion_rate) applies: global, the tenant's rate across all"
              + " distributors (each admits the limit divided by the healthy distributors in the distributor"
              + " ring, which distributors join in the -ingester.ring.* KV store); local, per distributor"
              + " process. The burst size is per distributor with either.");
      heartbeatPeriod = fs.duration("distributor.ring.heartbeat-period", Duration.ofSeconds(15),
          "Period at which a distributor heartbeats to the distributor ring (global rate-limit strategy).");
      heartbeatTimeout = fs.duration("distributor.ring.heartbeat-timeout", Duration.ofMinutes(1),
          "A distributor whose last heartbeat is older than this no longer counts in the global rate-limit"
              + " strategy's share (the others admit more).");
    }

    public DistributorConfig build() throws ConfigException {
      if (heartbeatPeriod.get().toMillis() < 1 || heartbeatTimeout.get().compareTo(heartbeatPeriod.get()) <= 0) {
        throw new ConfigException("distributor.ring.heartbeat-timeout must be longer than"
            + " distributor.ring.heartbeat-period");
      }
      return new DistributorConfig(strategy.get(), heartbeatPeriod.get(), heartbeatTimeout.get());
    }
  }
}
