package dev.weir.ingester.config;

import dev.weir.ingester.compactor.CompactorConfig;
import dev.weir.ingester.api.ApiLimits;
import dev.weir.ingester.api.OtlpTranslator;
import dev.weir.ingester.blockbuilder.BlockBuilderConfig;
import dev.weir.ingester.distributor.DistributorConfig;
import dev.weir.ingester.ingest.IngestStorageConfig;
import dev.weir.ingester.logging.LogConfig;
import dev.weir.ingester.push.IngesterConfig;
import dev.weir.ingester.ring.RingConfig;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.querier.QuerierConfig;
import dev.weir.ingester.server.ServerConfig;
import dev.weir.ingester.server.Tenants;
import dev.weir.ingester.storegateway.StoreGatewayConfig;
import dev.weir.storage.bucketstore.BucketStoreConfig;
import dev.weir.storage.compactor.BlocksCleanerConfig;
import dev.weir.storage.tsdb.EarlyCompaction;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.shipper.ShipperConfig;
import java.nio.file.Path;
import java.util.List;

/**
 * The whole configuration of a Weir process, built from one {@link FlagSet}: defaults, then the
 * {@code --config.file} YAML, then the command line.
 *
 * @param target which components run: all (single process), ingester, distributor, block-builder,
 *     store-gateway, querier
 * @param bucketStore the store-gateway's sync and query limits
 * @param compactor the compactor's bucket retention
 * @param otlp how OTLP metrics become Prometheus series
 * @param distributor the ingestion rate-limit strategy and the distributor ring
 * @param earlyCompaction when the heads are compacted early (series threshold, memory budget)
 */
public record WeirConfig(
    String target,
    LogConfig log,
    ServerConfig server,
    Tenants tenants,
    IngesterConfig ingester,
    Limits limits,
    TsdbConfig storage,
    RingConfig ring,
    IngestStorageConfig ingest,
    ApiLimits api,
    RuntimeConfigFile runtimeConfig,
    BlockBuilderConfig blockBuilder,
    BucketConfig bucket,
    BucketStoreConfig bucketStore,
    ShipperConfig shipper,
    QuerierConfig querier,
    BlocksCleanerConfig compactor,
    OtlpTranslator otlp,
    DistributorConfig distributor,
    EarlyCompaction.Config earlyCompaction) {

  /**
   * The runtime config file and its reload period.
   *
   * @param file null when there is none
   */
  public record RuntimeConfigFile(@org.jspecify.annotations.Nullable Path file, java.time.Duration period) {}

  /** Targets this build can run. */
  public static final List<String> TARGETS = List.of("all", "ingester", "distributor", "block-builder",
      "store-gateway", "querier", "compactor");

  /** All flag definitions, registered on one flag set. */
  public static final class Flags {
    private final FlagSet fs;
    private final Flag<String> target;
    private final Flag<String> configFile;
    private final LogConfig.Flags log;
    private final ServerConfig.Flags server;
    private final Tenants.Flags tenants;
    private final IngesterConfig.Flags ingester;
    private final OtlpTranslator.Flags otlp;
    private final Limits.Flags limits;
    private final StorageConfig.Flags storage;
    private final RingConfig.Flags ring;
    private final IngestStorageConfig.Flags ingest;
    private final ApiLimits.Flags api;
    private final Flag<String> runtimeFile;
    private final Flag<java.time.Duration> runtimePeriod;
    private final BlockBuilderConfig.Flags blockBuilder;
    private final BucketConfig.Flags bucket;
    private final StoreGatewayConfig.Flags bucketStore;
    private final QuerierConfig.Flags querier;
    private final CompactorConfig.Flags compactor;
    private final DistributorConfig.Flags distributor;

    public Flags(FlagSet fs) {
      this.fs = fs;
      target = fs.oneOf("target", "all", TARGETS,
          "Components to run: all (distributor and ingester in one process), ingester, distributor,"
              + " block-builder (Kafka mode: builds blocks from partitions into the bucket), store-gateway"
              + " (serves the bucket's blocks over the Ingester gRPC API: QueryStream, LabelNames, LabelValues),"
              + " querier (reads ingesters and store-gateways, merged), compactor (deletes blocks past"
              + " --compactor.blocks-retention-period from the bucket).");
      configFile = fs.string("config.file", "",
          "YAML file with configuration keys; command-line flags override it.");
      log = new LogConfig.Flags(fs);
      server = new ServerConfig.Flags(fs);
      tenants = new Tenants.Flags(fs);
      ingester = new IngesterConfig.Flags(fs);
      limits = new Limits.Flags(fs);
      storage = new StorageConfig.Flags(fs);
      ring = new RingConfig.Flags(fs);
      ingest = new IngestStorageConfig.Flags(fs);
      api = new ApiLimits.Flags(fs);
      runtimeFile = fs.string("runtime-config.file", "", "YAML file of per-tenant limit overrides, reloaded"
          + " while running (see docs/operations.md); empty for none.");
      runtimePeriod = fs.duration("runtime-config.reload-period", java.time.Duration.ofSeconds(10),
          "How often the runtime config file is checked for changes.");
      blockBuilder = new BlockBuilderConfig.Flags(fs);
      bucket = new BucketConfig.Flags(fs);
      bucketStore = new StoreGatewayConfig.Flags(fs);
      querier = new QuerierConfig.Flags(fs);
      compactor = new CompactorConfig.Flags(fs);
      otlp = new OtlpTranslator.Flags(fs);
      distributor = new DistributorConfig.Flags(fs);
    }

    public FlagSet flagSet() {
      return fs;
    }

    /**
     * Loads the YAML file named by {@code config.file} (found on the command line), then the
     * command line, and builds the validated configuration.
     */
    public WeirConfig load(String[] args) throws ConfigException {
      String file = findConfigFile(args);
      if (file != null && !file.isEmpty()) {
        fs.applyYaml(Path.of(file));
      }
      fs.parseArgs(args);
      if (!fs.positional().isEmpty()) {
        throw new ConfigException("unexpected argument: " + fs.positional().get(0) + " (flags start with -)");
      }
      return build();
    }

    public WeirConfig build() throws ConfigException {
      ServerConfig s = server.build();
      s.validate();
      IngesterConfig ing = ingester.build();
      return new WeirConfig(target.get(), log.build(), s, tenants.build(), ing, limits.build(),
          storage.build(ing.dataDir()), ring.build(), ingest.build(), api.build(),
          new RuntimeConfigFile(runtimeFile.get().isEmpty() ? null : Path.of(runtimeFile.get()), runtimePeriod.get()),
          blockBuilder.build(), bucket.build(), bucketStore.build(), storage.buildShipper(), querier.build(),
          compactor.build(), otlp.build(), distributor.build(), storage.buildEarlyCompaction());
    }

    private static String findConfigFile(String[] args) {
      String found = null;
      for (int i = 0; i < args.length; i++) {
        String a = args[i].replaceFirst("^--?", "");
        if (a.startsWith("config.file=")) {
          found = a.substring("config.file=".length());
        } else if (a.equals("config.file") && i + 1 < args.length) {
          found = args[i + 1];
        }
      }
      return found;
    }

    public Flag<String> configFile() {
      return configFile;
    }
  }
}
