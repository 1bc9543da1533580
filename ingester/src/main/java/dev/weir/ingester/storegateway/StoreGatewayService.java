package dev.weir.ingester.storegateway;

import dev.weir.ingester.config.BucketConfig;
import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.bucketstore.BucketStore;
import dev.weir.storage.bucketstore.BucketStoreConfig;
import dev.weir.storage.bucketstore.BucketStoreMetrics;
import dev.weir.storage.bucketstore.BucketStoreSyncer;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the store-gateway's {@link BucketStore} and its sync thread. Not ready until the first
 * sync of the bucket succeeded (then every block listed at start-up is loaded or counted as a
 * failure); then it tells its ring membership to turn ACTIVE, so queriers ask it only from then.
 *
 * <p>Thread-safe: {@link #store()} may be called from any thread once started.
 */
public final class StoreGatewayService implements Service {
  private static final Logger log = LoggerFactory.getLogger(StoreGatewayService.class);

  private final BucketStoreConfig config;
  private final BucketConfig bucketConfig;
  private final BucketStoreMetrics metrics;
  private final MeterRegistry registry;
  private volatile @Nullable BucketStore store;
  private volatile @Nullable BucketStoreSyncer syncer;
  private final Runnable onReady;

  /** @param onReady runs once, when the first sync succeeded (the store-gateway turns ACTIVE in its ring) */
  public StoreGatewayService(BucketStoreConfig config, BucketConfig bucketConfig, MeterRegistry registry,
      Runnable onReady) {
    this.onReady = onReady;
    this.config = config;
    this.bucketConfig = bucketConfig;
    this.metrics = new BucketStoreMetrics(registry);
    this.registry = registry;
  }

  @Override
  public String name() {
    return "store-gateway";
  }

  @Override
  public void start() throws Exception {
    BucketStore s = new BucketStore(config, bucketConfig.open(registry), metrics, System::currentTimeMillis);
    BucketStoreSyncer sync = new BucketStoreSyncer(s);
    sync.onFirstSync(onReady);
    log.info("msg=\"store-gateway starting\" bucket={} syncDir={} syncInterval={}", s.describeBucket(),
        config.syncDir(), config.syncInterval());
    store = s;
    syncer = sync;
    sync.start();
  }

  /** The store; UNAVAILABLE before the service started. */
  public BucketStore store() {
    BucketStore s = store;
    if (s == null) {
      throw Status.UNAVAILABLE.withDescription("the store-gateway is starting").asRuntimeException();
    }
    return s;
  }

  @Override
  public @Nullable String notReadyReason() {
    BucketStoreSyncer s = syncer;
    return s == null ? "not started" : s.notReadyReason();
  }

  @Override
  public void stop() throws InterruptedException {
    BucketStoreSyncer s = syncer;
    if (s != null) {
      s.close();
    }
  }
}
