package dev.weir.ingester.push;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Durations;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Per-tenant limits: the defaults from the flags, overridden per tenant by the runtime config file
 * (Mimir's format):
 *
 * <pre>
 * overrides:
 *   tenant-a:
 *     ingestion_rate: 50000
 *     ingestion_burst_size: 100000
 *     max_global_series_per_user: 1000000
 *     max_label_names_per_series: 40
 *     max_label_name_length: 1024
 *     max_label_value_length: 2048
 *     creation_grace_period: 10m
 *     ingestion_partitions_tenant_shard_size: 4
 *     max_global_exemplars_per_user: 100000
 *     out_of_order_time_window: 30m
 * </pre>
 *
 * <p>Immutable and thread-safe; {@link RuntimeConfig} swaps instances on reload.
 */
public final class Overrides implements Function<String, Limits> {
  private final Limits defaults;
  private final Map<String, Limits> perTenant;

  public Overrides(Limits defaults, Map<String, Limits> perTenant) {
    this.defaults = defaults;
    this.perTenant = Map.copyOf(perTenant);
  }

  @Override
  public Limits apply(String tenant) {
    return perTenant.getOrDefault(tenant, defaults);
  }

  public Limits defaults() {
    return defaults;
  }

  public Map<String, Limits> perTenant() {
    return perTenant;
  }

  /**
   * Parses a runtime config file on top of {@code defaults}.
   *
   * @throws ConfigException naming the file and the offending key
   */
  public static Overrides load(Path file, Limits defaults) throws ConfigException {
    Object root;
    try (InputStream in = Files.newInputStream(file)) {
      root = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
    } catch (IOException e) {
      throw new ConfigException("cannot read runtime config " + file + ": " + e.getMessage(), e);
    } catch (YAMLException e) {
      throw new ConfigException("runtime config " + file + " is not valid YAML: " + e.getMessage().replace('\n', ' '), e);
    }
    Map<String, Limits> out = new HashMap<>();
    if (root == null) {
      return new Overrides(defaults, out);
    }
    if (!(root instanceof Map<?, ?> top)) {
      throw new ConfigException("runtime config " + file + " must be a mapping with an 'overrides' key");
    }
    for (Object k : top.keySet()) {
      if (!"overrides".equals(k)) {
        throw new ConfigException("runtime config " + file + ": unknown top-level key '" + k + "'");
      }
    }
    Object ov = top.get("overrides");
    if (ov == null) {
      return new Overrides(defaults, out);
    }
    if (!(ov instanceof Map<?, ?> tenants)) {
      throw new ConfigException("runtime config " + file + ": 'overrides' must map tenants to limits");
    }
    for (Map.Entry<?, ?> t : tenants.entrySet()) {
      String tenant = String.valueOf(t.getKey());
      if (!(t.getValue() instanceof Map<?, ?> values)) {
        throw new ConfigException("runtime config " + file + ": overrides of '" + tenant + "' must be a mapping");
      }
      Limits l = defaults;
      for (Map.Entry<?, ?> e : values.entrySet()) {
        l = with(l, String.valueOf(e.getKey()), e.getValue(), file, tenant);
      }
      try {
        l.validate();
      } catch (ConfigException e) {
        throw new ConfigException("runtime config " + file + ": overrides of '" + tenant + "': " + e.getMessage(), e);
      }
      out.put(tenant, l);
    }
    return new Overrides(defaults, out);
  }

  private static Limits with(Limits l, String key, Object v, Path file, String tenant) throws ConfigException {
    Draft d = new Draft(l);
    try {
      String s = String.valueOf(v);
      switch (key) {
        case "ingestion_rate" -> d.ingestionRate = Double.parseDouble(s);
        case "ingestion_burst_size" -> d.ingestionBurstSize = Integer.parseInt(s);
        case "max_global_series_per_user" -> d.maxGlobalSeriesPerUser = Integer.parseInt(s);
        case "max_label_names_per_series" -> d.maxLabelNamesPerSeries = Integer.parseInt(s);
        case "max_label_name_length" -> d.maxLabelNameLength = Integer.parseInt(s);
        case "max_label_value_length" -> d.maxLabelValueLength = Integer.parseInt(s);
        case "creation_grace_period" -> d.creationGracePeriod = Durations.parse(s);
        case "compactor_blocks_retention_period" -> d.compactorBlocksRetentionPeriod = Durations.parse(s);
        case "ingestion_partitions_tenant_shard_size" -> d.ingestionPartitionsTenantShardSize = Integer.parseInt(s);
        case "max_native_histogram_buckets" -> d.maxNativeHistogramBuckets = Integer.parseInt(s);
        case "reduce_native_histogram_over_max_buckets" -> d.reduceNativeHistogramOverMaxBuckets = bool(s, key);
        case "native_histograms_ingestion_enabled" -> d.nativeHistogramsIngestionEnabled = bool(s, key);
        case "max_global_exemplars_per_user" -> d.maxGlobalExemplarsPerUser = Integer.parseInt(s);
        case "out_of_order_time_window" -> d.outOfOrderTimeWindow = Durations.parse(s);
        default -> throw new ConfigException("runtime config " + file + ": unknown limit '" + key + "' for tenant '"
            + tenant + "'");
      }
      return d.build();
    } catch (NumberFormatException e) {
      throw new ConfigException("runtime config " + file + ": '" + key + "' of tenant '" + tenant
          + "' is not a number: " + v);
    }
  }

  private static boolean bool(String s, String key) {
    return switch (s) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new NumberFormatException("'" + key + "' must be true or false");
    };
  }

  /** A tenant's limits while its overrides are applied one key at a time. */
  private static final class Draft {
    int maxLabelNamesPerSeries;
    int maxLabelNameLength;
    int maxLabelValueLength;
    Duration creationGracePeriod;
    int maxGlobalSeriesPerUser;
    double ingestionRate;
    int ingestionBurstSize;
    Duration compactorBlocksRetentionPeriod;
    int ingestionPartitionsTenantShardSize;
    int maxNativeHistogramBuckets;
    boolean reduceNativeHistogramOverMaxBuckets;
    boolean nativeHistogramsIngestionEnabled;
    int maxGlobalExemplarsPerUser;
    Duration outOfOrderTimeWindow;

    Draft(Limits l) {
      maxLabelNamesPerSeries = l.maxLabelNamesPerSeries();
      maxLabelNameLength = l.maxLabelNameLength();
      maxLabelValueLength = l.maxLabelValueLength();
      creationGracePeriod = l.creationGracePeriod();
      maxGlobalSeriesPerUser = l.maxGlobalSeriesPerUser();
      ingestionRate = l.ingestionRate();
      ingestionBurstSize = l.ingestionBurstSize();
      compactorBlocksRetentionPeriod = l.compactorBlocksRetentionPeriod();
      ingestionPartitionsTenantShardSize = l.ingestionPartitionsTenantShardSize();
      maxNativeHistogramBuckets = l.maxNativeHistogramBuckets();
      reduceNativeHistogramOverMaxBuckets = l.reduceNativeHistogramOverMaxBuckets();
      nativeHistogramsIngestionEnabled = l.nativeHistogramsIngestionEnabled();
      maxGlobalExemplarsPerUser = l.maxGlobalExemplarsPerUser();
      outOfOrderTimeWindow = l.outOfOrderTimeWindow();
    }

    Limits build() {
      return new Limits(maxLabelNamesPerSeries, maxLabelNameLength, maxLabelValueLength, creationGracePeriod,
          maxGlobalSeriesPerUser, ingestionRate, ingestionBurstSize, compactorBlocksRetentionPeriod,
          ingestionPartitionsTenantShardSize, maxNativeHistogramBuckets, reduceNativeHistogramOverMaxBuckets,
          nativeHistogramsIngestionEnabled, maxGlobalExemplarsPerUser, outOfOrderTimeWindow);
    }
  }
}
