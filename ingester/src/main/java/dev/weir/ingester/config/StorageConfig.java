package dev.weir.ingester.config;

import dev.weir.storage.tsdb.EarlyCompaction;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.shipper.ShipperConfig;
import dev.weir.storage.tsdb.wal.Wal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** Flag definitions for the storage ({@link TsdbConfig}), with Mimir's {@code blocks-storage.tsdb.*} names. */
public final class StorageConfig {
  private StorageConfig() {}

  /** Flag definitions; {@link #build} takes the data dir from the ingester's flags. */
  public static final class Flags {
    private final Flag<Duration> blockRange;
    private final Flag<Duration> retention;
    private final Flag<Duration> compactionInterval;
    private final Flag<Long> segmentSize;
    private final Flag<String> fsync;
    private final Flag<Duration> fsyncInterval;
    private final Flag<Boolean> repair;
    private final Flag<Duration> shipInterval;
    private final Flag<Integer> oooCapMax;
    private final Flag<Long> earlyMinSeries;
    private final Flag<Integer> earlyMinReduction;
    private final Flag<Integer> earlyMemoryPercent;
    private final Flag<Duration> earlyCheckInterval;

    public Flags(FlagSet fs) {
      blockRange = fs.duration("blocks-storage.tsdb.block-ranges-period", Duration.ofHours(2),
          "TSDB block range: the head's oldest complete range is compacted into a block of this width"
              + " once the head spans 1.5 ranges; chunks never cross a multiple of it.");
      retention = fs.duration("blocks-storage.tsdb.retention-period", Duration.ofDays(15),
          "Blocks whose samples are all older than the newest sample minus this are deleted; 0 keeps all.");
      compactionInterval = fs.duration("blocks-storage.tsdb.head-compaction-interval", Duration.ofMinutes(1),
          "How often the heads are checked for a range to compact (and retention applied).");
      segmentSize = fs.int64("blocks-storage.tsdb.wal-segment-size-bytes", 128L << 20,
          "Size of WAL segment files (bytes).");
      fsync = fs.oneOf("blocks-storage.tsdb.wal-fsync", "always", List.of("always", "interval"),
          "When the WAL is fsynced: always = before a push is acknowledged (group commit; survives power"
              + " loss), interval = every wal-fsync-interval (an acknowledged push survives a crash of Weir"
              + " but not of the machine). The Kafka reader always fsyncs before committing an offset.");
      fsyncInterval = fs.duration("blocks-storage.tsdb.wal-fsync-interval", Duration.ofSeconds(1),
          "Period of the background WAL fsync when wal-fsync=interval.");
      repair = fs.bool("blocks-storage.tsdb.wal-repair", true,
          "Repair a WAL that is corrupt before its end by truncating it at the corruption and deleting later"
              + " segments (the records after it are lost; logged at ERROR and counted in"
              + " weir_tsdb_wal_corruptions_total), like Prometheus. false refuses to start instead.");
      shipInterval = fs.duration("blocks-storage.tsdb.ship-interval", Duration.ofMinutes(1),
          "How often an ingester uploads the blocks its head compaction wrote (each once, tracked in"
              + " <data-dir>/tsdb/<tenant>/shipper.json) to the bucket (blocks-storage.backend); 0 disables"
              + " shipping. While shipping is enabled, a block past retention-period is deleted only once"
              + " shipped. In Kafka mode with block-builders, set 0: the block-builder owns long-term blocks.");
      oooCapMax = defineOooCapMax(fs);
      earlyMinSeries = fs.int64("blocks-storage.tsdb.early-head-compaction-min-in-memory-series", 0,
          "When the heads of all tenants hold at least this many series, heads are compacted early: every chunk"
              + " older than the oldest time the head still accepts in order (newest sample minus half a block"
              + " range) is written to a block and series left without samples leave memory. 0 disables this"
              + " trigger (as in Mimir).");
      earlyMinReduction = fs.integer("blocks-storage.tsdb.early-head-compaction-min-estimated-series-reduction-percentage",
          15, "An early compaction runs only when it is estimated to free at least this percentage (1 to 100) of"
              + " the heads' series (series threshold) or estimated memory (memory budget); then the heads are"
              + " compacted largest gain first while still over, a head gaining less than this at most once a"
              + " minute, and every head gaining at least this.");
      earlyMemoryPercent = fs.integer("blocks-storage.tsdb.early-head-compaction-memory-budget-percentage", 70,
          "Heads are also compacted early when their memory estimate (weir_tsdb_head_memory_estimate_bytes)"
              + " reaches this percentage of the JVM's maximum heap, so a catch-up with series churn frees memory"
              + " instead of running out of it. 0 disables this trigger.");
      earlyCheckInterval = fs.duration("blocks-storage.tsdb.early-head-compaction-check-interval", Duration.ofSeconds(5),
          "How often the heads are measured against the early compaction thresholds (a walk over every series).");
    }

    /** When heads are compacted early; the memory budget is taken from this JVM's maximum heap. */
    public EarlyCompaction.Config buildEarlyCompaction() throws ConfigException {
      if (earlyMinSeries.get() < 0) {
        throw new ConfigException("blocks-storage.tsdb.early-head-compaction-min-in-memory-series must not be negative");
      }
      int pct = earlyMinReduction.get();
      if (pct < 1 || pct > 100) { // 0 would compact every head at every check
        throw new ConfigException("blocks-storage.tsdb.early-head-compaction-min-estimated-series-reduction-percentage"
            + " must be in [1, 100]: " + pct);
      }
      int mem = earlyMemoryPercent.get();
      if (mem < 0 || mem > 100) {
        throw new ConfigException("blocks-storage.tsdb.early-head-compaction-memory-budget-percentage must be in"
            + " [0, 100]: " + mem);
      }
      if (earlyCheckInterval.get().toMillis() < 1) {
        throw new ConfigException("blocks-storage.tsdb.early-head-compaction-check-interval must be at least 1ms");
      }
      long budget = mem == 0 ? 0 : Runtime.getRuntime().maxMemory() / 100 * mem;
      return new EarlyCompaction.Config(earlyMinSeries.get(), budget, pct, earlyCheckInterval.get());
    }

    private Flag<Integer> defineOooCapMax(FlagSet fs) {
      return fs.integer("blocks-storage.tsdb.out-of-order-capacity-max", HeadConfig.DEFAULT_OOO_CAP_MAX,
          "Samples an out-of-order chunk of a series buffers, sorted, before it is encoded into an XOR chunk"
              + " (Prometheus' out_of_order_cap_max; 1 to 255). Bounds the uncompressed out-of-order buffer to"
              + " this × 16 bytes per series with out-of-order samples; see --ingester.out-of-order-time-window.");
    }

    /** The shipper's settings. */
    public ShipperConfig buildShipper() throws ConfigException {
      if (shipInterval.get().isNegative()) {
        throw new ConfigException("blocks-storage.tsdb.ship-interval must not be negative");
      }
      return new ShipperConfig(shipInterval.get());
    }

    public TsdbConfig build(Path dataDir) throws ConfigException {
      long ms = blockRange.get().toMillis();
      if (ms <= 0 || ms % 60_000 != 0) {
        throw new ConfigException("blocks-storage.tsdb.block-ranges-period must be a positive whole number"
            + " of minutes: " + Durations.format(blockRange.get()));
      }
      if (retention.get().isNegative()) {
        throw new ConfigException("blocks-storage.tsdb.retention-period must not be negative");
      }
      if (compactionInterval.get().toMillis() < 1) {
        throw new ConfigException("blocks-storage.tsdb.head-compaction-interval must be at least 1ms");
      }
      if (segmentSize.get() < 64 * 1024 || segmentSize.get() > Integer.MAX_VALUE) {
        throw new ConfigException("blocks-storage.tsdb.wal-segment-size-bytes must be in [64KiB, 2GiB)");
      }
      if (fsyncInterval.get().toMillis() < 1) {
        throw new ConfigException("blocks-storage.tsdb.wal-fsync-interval must be at least 1ms");
      }
      if (oooCapMax.get() < 1 || oooCapMax.get() > 255) {
        throw new ConfigException("blocks-storage.tsdb.out-of-order-capacity-max must be in [1, 255]: "
            + oooCapMax.get());
      }
      return new TsdbConfig(dataDir, new HeadConfig(ms, HeadConfig.DEFAULT.samplesPerChunk(), oooCapMax.get()),
          segmentSize.get(),
          TsdbConfig.FsyncMode.valueOf(fsync.get().toUpperCase(Locale.ROOT)), fsyncInterval.get(), repair.get(),
          retention.get(), compactionInterval.get(), Wal.DEFAULT_OPENER);
    }
  }
}
