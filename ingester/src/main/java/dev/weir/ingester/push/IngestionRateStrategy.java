package dev.weir.ingester.push;

import java.util.function.IntSupplier;

/**
 * How much of a tenant's {@code ingestion_rate} this distributor admits (Cortex's
 * {@code -distributor.ingestion-rate-limit-strategy}):
 *
 * <ul>
 *   <li>{@link #local()}: the whole limit, in every distributor (N distributors admit up to N
 *       times the limit);
 *   <li>{@link #global}: the limit divided by the number of healthy distributors in the
 *       distributor ring, so the fleet together admits the limit. With no healthy distributor in
 *       view (the ring not read yet, or the KV store lost for longer than the heartbeat timeout)
 *       it falls back to the whole limit rather than refusing everything.
 * </ul>
 *
 * The burst size is never divided (as in Mimir): it bounds how much one distributor admits at
 * once, not the rate. Implementations are thread-safe.
 */
public interface IngestionRateStrategy {
  /** Samples per second this distributor admits for a tenant with these limits; 0 = unlimited. */
  double rate(Limits limits);

  /** The 429 message's account of the limit, e.g. "10000 samples/s (global: 1/2 of it here)". */
  String describe(Limits limits);

  static IngestionRateStrategy local() {
    return new IngestionRateStrategy() {
      @Override
      public double rate(Limits limits) {
        return limits.ingestionRate();
      }

      @Override
      public String describe(Limits limits) {
        return limits.ingestionRate() + " samples/s";
      }
    };
  }

  /** @param healthyDistributors healthy ACTIVE members of the distributor ring, this one included */
  static IngestionRateStrategy global(IntSupplier healthyDistributors) {
    return new IngestionRateStrategy() {
      @Override
      public double rate(Limits limits) {
        return share(limits.ingestionRate(), healthyDistributors.getAsInt());
      }

      @Override
      public String describe(Limits limits) {
        int n = healthyDistributors.getAsInt();
        return limits.ingestionRate() + " samples/s across all distributors (" + Math.max(1, n)
            + " healthy in the distributor ring: " + share(limits.ingestionRate(), n) + " samples/s here)";
      }
    };
  }

  /** The global strategy's arithmetic: the limit split evenly, the whole when no count is known. */
  static double share(double limit, int healthyDistributors) {
    return healthyDistributors <= 0 ? limit : limit / healthyDistributors;
  }
}
