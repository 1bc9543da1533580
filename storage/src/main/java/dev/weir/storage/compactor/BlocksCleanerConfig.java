package dev.weir.storage.compactor;

import java.time.Duration;

/**
 * Settings of the {@link BlocksCleaner} (flags {@code compactor.*}, Mimir's names). The
 * constructor checks them and names the flag of a bad value. The retention itself is a per-tenant
 * limit ({@code compactor.blocks-retention-period}), given to the cleaner as a function.
 *
 * @param deletionDelay how long a block marked for deletion stays in the bucket, so readers that
 *     listed it before the mark (store-gateways sync every 15 minutes; queries in flight) stop
 *     using it before its files vanish
 * @param cleanupInterval how often the bucket is scanned
 */
public record BlocksCleanerConfig(Duration deletionDelay, Duration cleanupInterval) {
  /** Mimir's default: far above a store-gateway's sync interval and the longest query. */
  public static final Duration DEFAULT_DELETION_DELAY = Duration.ofHours(12);
  /** Mimir's default. */
  public static final Duration DEFAULT_CLEANUP_INTERVAL = Duration.ofMinutes(15);

  public BlocksCleanerConfig {
    if (deletionDelay.isNegative()) {
      throw new IllegalArgumentException("compactor.deletion-delay must not be negative");
    }
    if (cleanupInterval.toMillis() < 1) {
      throw new IllegalArgumentException("compactor.cleanup-interval must be at least 1ms");
    }
  }
}
