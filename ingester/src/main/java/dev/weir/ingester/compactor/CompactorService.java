package dev.weir.ingester.compactor;

import dev.weir.ingester.config.BucketConfig;
import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.compactor.BlocksCleaner;
import dev.weir.storage.compactor.BlocksCleanerConfig;
import dev.weir.storage.compactor.BlocksCleanerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link BlocksCleaner} on one named thread ({@code compactor-cleanup}): at start, then
 * every cleanup interval; one run at a time. Never reports not-ready: a failing bucket shows in
 * the cleanup metrics (and the alert on the last successful run), and the run is retried at the
 * next interval. The bucket is opened by the first run, so an unreachable one does not fail
 * start-up.
 *
 * <p>Start and stop come from the service manager's thread.
 */
public final class CompactorService implements Service {
  private static final Logger log = LoggerFactory.getLogger(CompactorService.class);

  private final BlocksCleanerConfig config;
  private final BucketConfig bucketConfig;
  private final MeterRegistry registry;
  private final Function<String, Duration> retention;
  private final BlocksCleanerMetrics metrics;
  private final LongSupplier clock;
  private final Semaphore wake = new Semaphore(0);
  private final Thread thread = new Thread(this::run, "compactor-cleanup");
  private volatile boolean stopped;
  private @Nullable BlocksCleaner cleaner;

  /** @param retention a tenant's retention (the flag, or its runtime override), asked at every run */
  public CompactorService(BlocksCleanerConfig config, BucketConfig bucketConfig, Function<String, Duration> retention,
      MeterRegistry registry, LongSupplier clock) {
    this.config = config;
    this.bucketConfig = bucketConfig;
    this.retention = retention;
    this.metrics = new BlocksCleanerMetrics(registry);
    this.registry = registry;
    this.clock = clock;
    thread.setDaemon(true);
  }

  @Override
  public String name() {
    return "compactor";
  }

  @Override
  public void start() {
    log.info("msg=\"compactor starting\" deletionDelay={} cleanupInterval={}", config.deletionDelay(),
        config.cleanupInterval());
    thread.start();
  }

  private void run() {
    try {
      while (!stopped) {
        runOnce();
        wake.tryAcquire(config.cleanupInterval().toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void runOnce() {
    long start = System.nanoTime();
    try {
      BlocksCleaner c = cleaner;
      if (c == null) {
        c = new BlocksCleaner(config, bucketConfig.open(registry), retention, metrics, clock);
        cleaner = c;
      }
      BlocksCleaner.Result r = c.runOnce();
      log.info("msg=\"bucket cleanup done\" marked={} deleted={} failures={} tookMs={}", r.marked(), r.deleted(),
          r.failures(), (System.nanoTime() - start) / 1_000_000);
    } catch (Exception e) {
      log.error("msg=\"bucket cleanup failed; retrying next interval\" err=\"{}\"", e.toString());
    }
  }

  @Override
  public void stop() throws InterruptedException {
    stopped = true;
    wake.release();
    thread.join(Duration.ofSeconds(30).toMillis());
    if (thread.isAlive()) {
      log.warn("msg=\"bucket cleanup still running after 30s; leaving it\"");
    }
  }
}
