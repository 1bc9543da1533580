package dev.weir.ingester.push;

import dev.weir.ring.partition.PartitionRing;
import org.jspecify.annotations.Nullable;

/**
 * The share of a tenant's {@code max_global_series_per_user} that one partition's ingester
 * enforces in Kafka mode (Mimir's partition-ring limiter): the global limit divided by the number
 * of partitions the tenant writes to, its shuffle-shard size or else every ACTIVE partition,
 * rounded down but at least 1. Series spread evenly over those partitions by their hash, so the
 * tenant reaches its global limit about when every partition reaches its share. Stateless.
 */
public final class SeriesLimit {
  private SeriesLimit() {}

  /**
   * The per-partition limit; 0 (unlimited) when the global limit is 0. Before the ring is known
   * ({@code ring} null or without ACTIVE partition) the whole global limit applies.
   */
  public static int perPartition(Limits limits, @Nullable PartitionRing ring) {
    return perPartition(limits.maxGlobalSeriesPerUser(), limits, ring);
  }

  /** The same division for another global limit ({@code max_global_exemplars_per_user}). */
  public static int perPartition(int global, Limits limits, @Nullable PartitionRing ring) {
    if (global == 0) {
      return 0;
    }
    int partitions = ring == null ? 0 : ring.shuffleShardSize(limits.ingestionPartitionsTenantShardSize());
    return Math.max(1, global / Math.max(1, partitions));
  }
}
