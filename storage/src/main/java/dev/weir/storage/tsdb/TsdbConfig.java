package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.wal.Wal;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Storage settings (flags {@code blocks-storage.tsdb.*}).
 *
 * @param dataDir where {@code tsdb/<tenant>/} lives: blocks, WAL ({@code wal/}); see {@link DataDirLayout}
 * @param head chunk range (= block range) and samples per chunk
 * @param walSegmentBytes WAL segment size
 * @param fsync when acknowledged writes are fsynced
 * @param fsyncInterval period of the background fsync in {@link FsyncMode#INTERVAL}
 * @param walRepair truncate a WAL corrupt in the middle (dropping what follows) instead of
 *     refusing to start; true by default, like Prometheus
 * @param retention blocks whose data is older than the newest sample minus this are deleted;
 *     zero keeps everything
 * @param compactionInterval how often heads are checked for a complete range to compact
 * @param channelOpener opens WAL segments (test knob: inject I/O failures)
 */
public record TsdbConfig(Path dataDir, HeadConfig head, long walSegmentBytes, FsyncMode fsync,
    Duration fsyncInterval, boolean walRepair, Duration retention, Duration compactionInterval,
    Wal.ChannelOpener channelOpener) {

  /** When the WAL is fsynced. */
  public enum FsyncMode {
    /** Before a push is acknowledged (group commit across concurrent pushes). */
    ALWAYS,
    /** In the background every interval; a push is acknowledged once written (survives kill -9). */
    INTERVAL
  }

  public static TsdbConfig defaults(Path dataDir) {
    return new TsdbConfig(dataDir, HeadConfig.DEFAULT, 128L << 20, FsyncMode.ALWAYS, Duration.ofSeconds(1),
        true, Duration.ofDays(15), Duration.ofMinutes(1), Wal.DEFAULT_OPENER);
  }

  public TsdbConfig withChannelOpener(Wal.ChannelOpener opener) {
    return new TsdbConfig(dataDir, head, walSegmentBytes, fsync, fsyncInterval, walRepair, retention,
        compactionInterval, opener);
  }

  public TsdbConfig withWalSegmentBytes(long bytes) {
    return new TsdbConfig(dataDir, head, bytes, fsync, fsyncInterval, walRepair, retention,
        compactionInterval, channelOpener);
  }

  public TsdbConfig withWalRepair(boolean repair) {
    return new TsdbConfig(dataDir, head, walSegmentBytes, fsync, fsyncInterval, repair, retention,
        compactionInterval, channelOpener);
  }

  public TsdbConfig withRetention(Duration r) {
    return new TsdbConfig(dataDir, head, walSegmentBytes, fsync, fsyncInterval, walRepair, r,
        compactionInterval, channelOpener);
  }

  public TsdbConfig withHead(HeadConfig h) {
    return new TsdbConfig(dataDir, h, walSegmentBytes, fsync, fsyncInterval, walRepair, retention,
        compactionInterval, channelOpener);
  }

  /**
   * The tenant's WAL directory, {@code tsdb/<tenant>/wal} (Prometheus' format).
   *
   * @throws dev.weir.storage.errors.ClientErrorException ({@code invalid_tenant}) as {@link #blocksDir}
   */
  public Path walDir(String tenant) {
    return blocksDir(tenant).resolve(DataDirLayout.WAL);
  }

  /** The tenant's out-of-order write-behind log, {@code tsdb/<tenant>/wbl} (Prometheus' name). */
  public Path wblDir(String tenant) {
    return blocksDir(tenant).resolve("wbl");
  }

  /**
   * The tenant's TSDB directory, {@code tsdb/<tenant>}: its blocks, its WAL and what promtool
   * opens.
   *
   * @throws dev.weir.storage.errors.ClientErrorException ({@code invalid_tenant}) when the tenant
   *     would name anything but a direct child of {@code tsdb/}; see {@link TenantPaths}
   */
  public Path blocksDir(String tenant) {
    return TenantPaths.child(dataDir.resolve(DataDirLayout.TSDB_ROOT), tenant);
  }
}
