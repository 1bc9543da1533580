package dev.weir.storage.tsdb.shipper;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Metrics of the {@link Shipper}, with the names of Mimir's ingester shipper under Weir's
 * prefix. Thread-safe.
 */
public final class ShipperMetrics {
  final Counter uploads;
  final Counter uploadFailures;
  final Counter syncs;
  /** Wall-clock milliseconds of the last successful upload; 0 until one succeeded. */
  final AtomicLong lastSuccessfulUploadMillis = new AtomicLong();
  final AtomicInteger pendingBlocks = new AtomicInteger();

  public ShipperMetrics(MeterRegistry r) {
    uploads = Counter.builder("weir.ingester.shipper.uploads")
        .description("Blocks uploaded to the bucket.").register(r);
    uploadFailures = Counter.builder("weir.ingester.shipper.upload.failures")
        .description("Block uploads that failed (the block stays local and is retried next interval).").register(r);
    syncs = Counter.builder("weir.ingester.shipper.syncs")
        .description("Shipping rounds completed (every ship-interval).").register(r);
    Gauge.builder("weir.ingester.shipper.last.successful.upload.timestamp.seconds", lastSuccessfulUploadMillis,
            m -> m.get() / 1000.0)
        .description("Unix time of the last block uploaded to the bucket; 0 before the first.").register(r);
    Gauge.builder("weir.ingester.shipper.pending.blocks", pendingBlocks, AtomicInteger::get)
        .description("Local blocks to ship that are not in the bucket yet, as of the last round.").register(r);
  }

  /** Local blocks not in the bucket as of the last round, or -1 before the first round completed. */
  public int pendingBlocks() {
    return syncs.count() == 0 ? -1 : pendingBlocks.get();
  }
}
