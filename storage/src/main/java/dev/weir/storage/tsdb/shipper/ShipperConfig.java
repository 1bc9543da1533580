package dev.weir.storage.tsdb.shipper;

import java.time.Duration;

/**
 * Shipper settings (flag {@code blocks-storage.tsdb.ship-interval}, Mimir's name).
 *
 * @param interval how often local blocks not yet in the bucket are uploaded; zero disables
 *     shipping (the block-builder owns long-term blocks, or there is no bucket)
 */
public record ShipperConfig(Duration interval) {
  public static final ShipperConfig DISABLED = new ShipperConfig(Duration.ZERO);

  public ShipperConfig {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("blocks-storage.tsdb.ship-interval must not be negative: " + interval);
    }
  }

  public boolean enabled() {
    return !interval.isZero();
  }
}
