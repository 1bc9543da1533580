package dev.weir.ingester.shipper;

import dev.weir.ingester.config.BucketConfig;
import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.shipper.ShippedBlocks;
import dev.weir.storage.tsdb.shipper.Shipper;
import dev.weir.storage.tsdb.shipper.ShipperConfig;
import dev.weir.storage.tsdb.shipper.ShipperMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs the {@link Shipper} of an ingester: starts the shipper thread (which opens the bucket) after
 * the storage is open, stops it before the storage closes (list it after the ingester). The
 * caller gives the storage the same {@link ShippedBlocks} as its retention gate (see {@link
 * #wire}). Never reports not-ready: a failing bucket must not stop ingestion; it shows in the
 * shipper's metrics and alert instead.
 *
 * <p>Start and stop come from the service manager's thread.
 */
public final class ShipperService implements Service {
  private final ShipperConfig config;
  private final BucketConfig bucketConfig;
  private final Tsdb tsdb;
  private final ShippedBlocks shipped;
  private final ShipperMetrics metrics;
  private final MeterRegistry registry;
  private final LongSupplier wallClock;
  private @Nullable Shipper shipper;

  private ShipperService(ShipperConfig config, BucketConfig bucketConfig, Tsdb tsdb, ShippedBlocks shipped,
      ShipperMetrics metrics, MeterRegistry registry, LongSupplier wallClock) {
    this.config = config;
    this.registry = registry;
    this.bucketConfig = bucketConfig;
    this.tsdb = tsdb;
    this.shipped = shipped;
    this.metrics = metrics;
    this.wallClock = wallClock;
  }

  /**
   * The service for {@code tsdb}, whose retention it gates from now on (call before the storage
   * opens).
   */
  public static ShipperService wire(ShipperConfig config, BucketConfig bucketConfig, Tsdb tsdb,
      MeterRegistry registry, LongSupplier wallClock) {
    ShippedBlocks shipped = new ShippedBlocks(tsdb.config());
    tsdb.retentionGate(shipped);
    return new ShipperService(config, bucketConfig, tsdb, shipped, new ShipperMetrics(registry), registry, wallClock);
  }

  /** Local blocks not in the bucket as of the last round, or -1 before the first round completed. */
  public int pendingBlocks() {
    return metrics.pendingBlocks();
  }

  @Override
  public String name() {
    return "shipper";
  }

  @Override
  public void start() {
    // The bucket is opened by the shipper's first round: one unreachable at start must not stop
    // the ingester from starting.
    Shipper s = new Shipper(config, tsdb, () -> bucketConfig.open(registry), shipped, metrics, wallClock);
    s.start();
    shipper = s;
  }

  @Override
  public void stop() {
    Shipper s = shipper;
    if (s != null) {
      s.close();
    }
  }
}
