package dev.weir.ingester.config;

import dev.weir.storage.tsdb.head.HeadConfig;
import java.time.Duration;

/**
 * Storage settings of the TSDB, with Mimir's {@code blocks-storage.tsdb.*} names.
 *
 * @param head chunk range (the block range) and samples per chunk
 */
public record StorageConfig(HeadConfig head) {

  /** Flag definitions for {@link StorageConfig}. */
  public static final class Flags {
    private final Flag<Duration> blockRange;

    public Flags(FlagSet fs) {
      blockRange = fs.duration("blocks-storage.tsdb.block-ranges-period", Duration.ofHours(2),
          "TSDB block range: head chunks never cross a multiple of it, and blocks cover one range.");
    }

    public StorageConfig build() throws ConfigException {
      long ms = blockRange.get().toMillis();
      if (ms <= 0 || ms % 60_000 != 0) {
        throw new ConfigException("blocks-storage.tsdb.block-ranges-period must be a positive whole number"
            + " of minutes: " + Durations.format(blockRange.get()));
      }
      return new StorageConfig(new HeadConfig(ms, HeadConfig.DEFAULT.samplesPerChunk()));
    }
  }
}
