package dev.weir.storage.bucketstore;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@link BucketStore#sync()} on one named thread ({@code bucket-store-sync}): at once, then
 * every sync interval. Until the first sync succeeds it retries sooner (every
 * {@link #INITIAL_RETRY} at most) and {@link #notReadyReason()} says why it is not ready; after
 * that a failed sync keeps the blocks loaded so far and only counts.
 *
 * <p>Thread-safe. {@link #close} stops the thread (a sync in progress finishes first).
 */
public final class BucketStoreSyncer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BucketStoreSyncer.class);
  /** Retry period of a failing first sync: the process is not ready until it succeeds. */
  static final Duration INITIAL_RETRY = Duration.ofSeconds(5);

  private final BucketStore store;
  private final Thread thread;
  /** Released to end a wait early: by {@link #wakeup()} and by {@link #close()}. */
  private final Semaphore wake = new Semaphore(0);
  private volatile boolean stopped;
  private volatile boolean synced;
  private volatile @Nullable String lastError;
  private volatile Runnable onFirstSync = () -> {};

  public BucketStoreSyncer(BucketStore store) {
    this.store = store;
    this.thread = new Thread(this::run, "bucket-store-sync");
    thread.setDaemon(true);
    store.onBlockGone(this::wakeup);
  }

  /** Runs the next sync now (a query found a block's files gone). */
  public void wakeup() {
    wake.release();
  }

  /** Runs {@code action} on the sync thread once, right after the first sync succeeded. Call before start. */
  public void onFirstSync(Runnable action) {
    this.onFirstSync = action;
  }

  public void start() {
    thread.start();
  }

  private void run() {
    long interval = store.config().syncInterval().toMillis();
    try {
      while (!stopped) {
        runOnce();
        wake.tryAcquire(synced ? interval : Math.min(interval, INITIAL_RETRY.toMillis()), TimeUnit.MILLISECONDS);
        wake.drainPermits();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void runOnce() {
    long start = System.nanoTime();
    try {
      store.sync();
      boolean first = !synced;
      if (first) {
        log.info("msg=\"first bucket sync done\" bucket={} tookMs={}", store.describeBucket(),
            (System.nanoTime() - start) / 1_000_000);
      }
      synced = true;
      lastError = null;
      if (first) {
        onFirstSync.run();
      }
    } catch (Exception e) {
      lastError = e.toString();
      log.error("msg=\"bucket sync failed\" bucket={} err=\"{}\"", store.describeBucket(), e.toString());
    }
  }

  /** Null once the first sync succeeded; before, why the store cannot serve yet. */
  public @Nullable String notReadyReason() {
    if (synced) {
      return null;
    }
    String err = lastError;
    return "the first bucket sync has not finished" + (err == null ? "" : "; the last attempt failed: " + err);
  }

  @Override
  public void close() throws InterruptedException {
    stopped = true;
    wake.release();
    thread.join(Duration.ofSeconds(30).toMillis());
    if (thread.isAlive()) {
      log.warn("msg=\"bucket sync still running after 30s; leaving it\"");
    }
  }
}
