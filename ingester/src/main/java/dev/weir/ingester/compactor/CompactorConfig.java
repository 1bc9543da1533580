package dev.weir.ingester.compactor;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.compactor.BlocksCleanerConfig;
import java.time.Duration;

/**
 * Flag definitions of the compactor's {@link BlocksCleanerConfig}, with Mimir's
 * {@code compactor.*} names; the bucket itself is {@link dev.weir.ingester.config.BucketConfig}, the
 * retention a per-tenant limit ({@link dev.weir.ingester.push.Limits}).
 */
public final class CompactorConfig {
  private CompactorConfig() {}

  /** Flag definitions. */
  public static final class Flags {
    private final Flag<Duration> deletionDelay;
    private final Flag<Duration> cleanupInterval;

    public Flags(FlagSet fs) {
      deletionDelay = fs.duration("compactor.deletion-delay", BlocksCleanerConfig.DEFAULT_DELETION_DELAY,
          "How long a block marked for deletion stays in the bucket before it is deleted. Keep it well above"
              + " --blocks-storage.bucket-store.sync-interval plus the longest query, so no store-gateway reads a"
              + " block whose files are gone.");
      cleanupInterval = fs.duration("compactor.cleanup-interval", BlocksCleanerConfig.DEFAULT_CLEANUP_INTERVAL,
          "How often the compactor scans the bucket to mark and delete blocks.");
    }

    public BlocksCleanerConfig build() throws ConfigException {
      try {
        return new BlocksCleanerConfig(deletionDelay.get(), cleanupInterval.get());
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
    }
  }
}
