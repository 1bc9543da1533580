package dev.weir.ingester.push;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.time.Duration;

/**
 * Per-tenant validation limits, with Mimir's flag names and defaults.
 *
 * @param maxLabelNamesPerSeries most labels a series may have, {@code __name__} included
 * @param maxLabelNameLength longest label name, in characters
 * @param maxLabelValueLength longest label value, in characters
 * @param creationGracePeriod how far in the future a sample timestamp may be
 * @param maxGlobalSeriesPerUser most series a tenant may have in memory; 0 = unlimited
 * @param ingestionRate samples per second a tenant may push (token bucket); 0 = unlimited
 * @param ingestionBurstSize bucket size of that limit, in samples
 * @param compactorBlocksRetentionPeriod how long the compactor keeps a tenant's blocks in the
 *     bucket; zero keeps them forever
 * @param ingestionPartitionsTenantShardSize Kafka mode: how many ACTIVE partitions a tenant's
 *     series are shuffle-sharded over; 0 = all of them
 * @param maxNativeHistogramBuckets most buckets (positive plus negative) a native histogram
 *     sample may have; 0 = unlimited
 * @param reduceNativeHistogramOverMaxBuckets above that limit, lower the histogram's resolution
 *     until it fits (true) instead of refusing it
 * @param nativeHistogramsIngestionEnabled whether native histogram samples are stored at all
 * @param maxGlobalExemplarsPerUser most exemplars a tenant keeps in memory (in Kafka mode shared by
 *     its partitions, like the series limit); 0 = exemplars are not stored
 * @param outOfOrderTimeWindow how much older than the tenant's newest sample a sample may be and
 *     still be stored (out of order); zero refuses out-of-order samples (Mimir's default)
 */
public record Limits(
    int maxLabelNamesPerSeries,
    int maxLabelNameLength,
    int maxLabelValueLength,
    Duration creationGracePeriod,
    int maxGlobalSeriesPerUser,
    double ingestionRate,
    int ingestionBurstSize,
    Duration compactorBlocksRetentionPeriod,
    int ingestionPartitionsTenantShardSize,
    int maxNativeHistogramBuckets,
    boolean reduceNativeHistogramOverMaxBuckets,
    boolean nativeHistogramsIngestionEnabled,
    int maxGlobalExemplarsPerUser,
    Duration outOfOrderTimeWindow) {

  /** Native histograms are stored, without a bucket limit, reduced when a limit is set (Mimir's defaults apart from enabled). */
  public Limits(int maxLabelNamesPerSeries, int maxLabelNameLength, int maxLabelValueLength,
      Duration creationGracePeriod, int maxGlobalSeriesPerUser, double ingestionRate, int ingestionBurstSize,
      Duration compactorBlocksRetentionPeriod, int ingestionPartitionsTenantShardSize) {
    this(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod, maxGlobalSeriesPerUser,
        ingestionRate, ingestionBurstSize, compactorBlocksRetentionPeriod, ingestionPartitionsTenantShardSize, 0, true,
        true, DEFAULT_MAX_EXEMPLARS, Duration.ZERO);
  }

  /** These limits with other native histogram limits. */
  public Limits withNativeHistograms(int maxBuckets, boolean reduceOverMax, boolean ingestionEnabled) {
    return new Limits(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod,
        maxGlobalSeriesPerUser, ingestionRate, ingestionBurstSize, compactorBlocksRetentionPeriod,
        ingestionPartitionsTenantShardSize, maxBuckets, reduceOverMax, ingestionEnabled, maxGlobalExemplarsPerUser,
        outOfOrderTimeWindow);
  }

  /**
   * Prometheus' default for {@code --storage.tsdb.max-exemplars}, not Mimir's 0 (disabled): Weir is
   * often run for one or a few tenants, where exemplars should work as in Prometheus; at most
   * ~200 bytes each (labels are at most 128 runes), that is ~20 MB per tenant. Many-tenant setups
   * set 0 and enable them per tenant.
   */
  public static final int DEFAULT_MAX_EXEMPLARS = 100_000;

  public static final Limits DEFAULT = new Limits(30, 1024, 2048, Duration.ofMinutes(10), 150_000, 0, 200_000);

  /** Limits without shuffle sharding (every tenant on all partitions: the shard-size default). */
  public Limits(int maxLabelNamesPerSeries, int maxLabelNameLength, int maxLabelValueLength,
      Duration creationGracePeriod, int maxGlobalSeriesPerUser, double ingestionRate, int ingestionBurstSize,
      Duration compactorBlocksRetentionPeriod) {
    this(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod, maxGlobalSeriesPerUser,
        ingestionRate, ingestionBurstSize, compactorBlocksRetentionPeriod, 0);
  }

  /** Limits that keep blocks forever (the retention default). */
  public Limits(int maxLabelNamesPerSeries, int maxLabelNameLength, int maxLabelValueLength,
      Duration creationGracePeriod, int maxGlobalSeriesPerUser, double ingestionRate, int ingestionBurstSize) {
    this(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod, maxGlobalSeriesPerUser,
        ingestionRate, ingestionBurstSize, Duration.ZERO);
  }

  public Limits(int maxLabelNamesPerSeries, int maxLabelNameLength, int maxLabelValueLength,
      Duration creationGracePeriod, int maxGlobalSeriesPerUser) {
    this(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod, maxGlobalSeriesPerUser,
        0, 200_000);
  }

  public void validate() throws ConfigException {
    if (maxLabelNamesPerSeries < 1) {
      throw new ConfigException("validation.max-label-names-per-series must be at least 1");
    }
    if (maxLabelNameLength < 1) {
      throw new ConfigException("validation.max-length-label-name must be at least 1");
    }
    if (maxLabelValueLength < 1) {
      throw new ConfigException("validation.max-length-label-value must be at least 1");
    }
    if (maxGlobalSeriesPerUser < 0) {
      throw new ConfigException("ingester.max-global-series-per-user must not be negative");
    }
    if (ingestionRate < 0) {
      throw new ConfigException("distributor.ingestion-rate-limit must not be negative");
    }
    if (ingestionRate > 0 && ingestionBurstSize < 1) {
      throw new ConfigException("distributor.ingestion-burst-size must be at least 1 with a rate limit");
    }
    if (creationGracePeriod.isNegative()) {
      throw new ConfigException("validation.create-grace-period must not be negative");
    }
    if (compactorBlocksRetentionPeriod.isNegative()) {
      throw new ConfigException("compactor.blocks-retention-period must not be negative");
    }
    if (ingestionPartitionsTenantShardSize < 0) {
      throw new ConfigException("ingest-storage.ingestion-partition-tenant-shard-size must not be negative");
    }
    if (maxNativeHistogramBuckets < 0) {
      throw new ConfigException("validation.max-native-histogram-buckets must not be negative");
    }
    if (maxGlobalExemplarsPerUser < 0) {
      throw new ConfigException("ingester.max-global-exemplars-per-user must not be negative");
    }
    if (outOfOrderTimeWindow.isNegative()) {
      throw new ConfigException("ingester.out-of-order-time-window must not be negative");
    }
  }

  /** Flag definitions for {@link Limits}. */
  public static final class Flags {
    private final Flag<Integer> maxLabelNames;
    private final Flag<Integer> maxNameLength;
    private final Flag<Integer> maxValueLength;
    private final Flag<Duration> grace;
    private final Flag<Integer> maxSeries;
    private final Flag<Double> rate;
    private final Flag<Integer> burst;
    private final Flag<Duration> retention;
    private final Flag<Integer> shardSize;
    private final Flag<Integer> maxHistogramBuckets;
    private final Flag<Boolean> reduceHistograms;
    private final Flag<Boolean> histogramsEnabled;
    private final Flag<Integer> maxExemplars;
    private final Flag<Duration> oooWindow;

    public Flags(FlagSet fs) {
      maxLabelNames = fs.integer("validation.max-label-names-per-series", DEFAULT.maxLabelNamesPerSeries,
          "Maximum number of label names per series (client error max_label_names_per_series above).");
      maxNameLength = fs.integer("validation.max-length-label-name", DEFAULT.maxLabelNameLength,
          "Maximum length accepted for label names (client error label_name_too_long above).");
      maxValueLength = fs.integer("validation.max-length-label-value", DEFAULT.maxLabelValueLength,
          "Maximum length accepted for label values (client error label_value_too_long above).");
      grace = fs.duration("validation.create-grace-period", DEFAULT.creationGracePeriod,
          "How far into the future a sample timestamp may be (client error sample_too_far_in_future).");
      maxSeries = fs.integer("ingester.max-global-series-per-user", DEFAULT.maxGlobalSeriesPerUser,
          "Most series a tenant may have in memory; creating more is the client error per_user_series_limit."
              + " 0 disables the limit.");
      rate = fs.float64("distributor.ingestion-rate-limit", DEFAULT.ingestionRate,
          "Per-tenant ingestion rate limit in samples per second, across all distributors or per distributor"
              + " (-distributor.ingestion-rate-limit-strategy); above it pushes get 429. 0 disables the limit"
              + " (Mimir's default is 10000).");
      burst = fs.integer("distributor.ingestion-burst-size", DEFAULT.ingestionBurstSize,
          "Per-tenant allowed ingestion burst size in samples.");
      retention = fs.duration("compactor.blocks-retention-period", DEFAULT.compactorBlocksRetentionPeriod,
          "Delete a tenant's blocks from the bucket once all their samples are older than this"
              + " (--target=compactor; per tenant: compactor_blocks_retention_period in the runtime config): a"
              + " block is marked for deletion (deletion-mark.json), store-gateways stop serving it at their"
              + " next sync, and it is deleted after --compactor.deletion-delay. 0 keeps blocks forever.");
      shardSize = fs.integer("ingest-storage.ingestion-partition-tenant-shard-size", 0,
          "Kafka mode: the number of ACTIVE partitions a tenant's series are written to, chosen per tenant by"
              + " shuffle sharding (per tenant: ingestion_partitions_tenant_shard_size in the runtime config); the"
              + " ingesters divide -ingester.max-global-series-per-user by it. 0 writes to all partitions.");
      maxHistogramBuckets = fs.integer("validation.max-native-histogram-buckets", 0,
          "Most buckets (positive plus negative) a native histogram sample may have (per tenant:"
              + " max_native_histogram_buckets in the runtime config); above it the sample is reduced or refused"
              + " (-validation.reduce-native-histogram-over-max-buckets). 0 disables the limit.");
      reduceHistograms = fs.bool("validation.reduce-native-histogram-over-max-buckets", true,
          "Lower the resolution of a native histogram over -validation.max-native-histogram-buckets (merge"
              + " neighbouring buckets, schema - 1 at a time) until it fits; false, or a histogram that cannot be"
              + " reduced enough (schema -4, custom buckets), refuses it as max_native_histogram_buckets (per"
              + " tenant: reduce_native_histogram_over_max_buckets).");
      histogramsEnabled = fs.bool("ingester.native-histograms-ingestion-enabled", true,
          "Store native histogram samples (per tenant: native_histograms_ingestion_enabled). Enabled by default:"
              + " a client sends them only when its operator asked for it (send_native_histograms), and Weir"
              + " stores, queries and compacts them; false refuses them as native_histograms_disabled.");
      maxExemplars = fs.integer("ingester.max-global-exemplars-per-user", DEFAULT_MAX_EXEMPLARS,
          "Most exemplars a tenant keeps in memory (per tenant: max_global_exemplars_per_user), in a ring that"
              + " evicts the oldest; in Kafka mode shared by the tenant's partitions like the series limit."
              + " 0 stores none (Mimir's default); the default is Prometheus' --storage.tsdb.max-exemplars.");
      oooWindow = fs.duration("ingester.out-of-order-time-window", Duration.ZERO,
          "Out-of-order window: a sample older than the newest of its series (or than the head's in-order"
              + " bound) but not older than the tenant's newest sample minus this is stored in the"
              + " out-of-order head (logged to <data-dir>/tsdb/<tenant>/wbl, merged on queries, compacted into"
              + " blocks); older is the client error sample_too_old. 0 refuses out-of-order samples"
              + " (sample_out_of_order). Float samples only: native histograms stay in order. Per tenant:"
              + " out_of_order_time_window in the runtime config.");
    }

    public Limits build() throws ConfigException {
      Limits l = new Limits(maxLabelNames.get(), maxNameLength.get(), maxValueLength.get(), grace.get(),
          maxSeries.get(), rate.get(), burst.get(), retention.get(), shardSize.get(), maxHistogramBuckets.get(),
          reduceHistograms.get(), histogramsEnabled.get(), maxExemplars.get(), oooWindow.get());
      l.validate();
      return l;
    }
  }
}
