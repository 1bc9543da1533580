package dev.weir.ingester.push;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Durations;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
    try {
      String s = String.valueOf(v);
      return switch (key) {
        case "ingestion_rate" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(), l.maxLabelValueLength(),
            l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), Double.parseDouble(s), l.ingestionBurstSize(),
            l.compactorBlocksRetentionPeriod());
        case "ingestion_burst_size" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(),
            l.maxLabelValueLength(), l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            Integer.parseInt(s), l.compactorBlocksRetentionPeriod());
        case "max_global_series_per_user" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(),
            l.maxLabelValueLength(), l.creationGracePeriod(), Integer.parseInt(s), l.ingestionRate(),
            l.ingestionBurstSize(), l.compactorBlocksRetentionPeriod());
        case "max_label_names_per_series" -> new Limits(Integer.parseInt(s), l.maxLabelNameLength(),
            l.maxLabelValueLength(), l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            l.ingestionBurstSize(), l.compactorBlocksRetentionPeriod());
        case "max_label_name_length" -> new Limits(l.maxLabelNamesPerSeries(), Integer.parseInt(s),
            l.maxLabelValueLength(), l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            l.ingestionBurstSize(), l.compactorBlocksRetentionPeriod());
        case "max_label_value_length" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(),
            Integer.parseInt(s), l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            l.ingestionBurstSize(), l.compactorBlocksRetentionPeriod());
        case "creation_grace_period" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(),
            l.maxLabelValueLength(), Durations.parse(s), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            l.ingestionBurstSize(), l.compactorBlocksRetentionPeriod());
        case "compactor_blocks_retention_period" -> new Limits(l.maxLabelNamesPerSeries(), l.maxLabelNameLength(),
            l.maxLabelValueLength(), l.creationGracePeriod(), l.maxGlobalSeriesPerUser(), l.ingestionRate(),
            l.ingestionBurstSize(), Durations.parse(s));
        default -> throw new ConfigException("runtime config " + file + ": unknown limit '" + key + "' for tenant '"
            + tenant + "'");
      };
    } catch (NumberFormatException e) {
      throw new ConfigException("runtime config " + file + ": '" + key + "' of tenant '" + tenant
          + "' is not a number: " + v);
    }
  }
}
