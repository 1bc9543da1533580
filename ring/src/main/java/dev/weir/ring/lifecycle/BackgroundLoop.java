package dev.weir.ring.lifecycle;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One named thread that runs {@code runOnce} every period, or earlier when {@link #wake()} is
 * called. {@link #close()} sets the stop flag, wakes the thread and joins it. Exceptions from an
 * iteration are logged and the loop goes on.
 *
 * <p>Thread-safe.
 */
final class BackgroundLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BackgroundLoop.class);

  private final Thread thread;
  private final LinkedBlockingQueue<Boolean> wakeups = new LinkedBlockingQueue<>();
  private volatile boolean stopped;

  BackgroundLoop(String name, long periodMillis, Runnable runOnce) {
    thread = new Thread(() -> {
      while (!stopped) {
        try {
          wakeups.poll(periodMillis, TimeUnit.MILLISECONDS);
          wakeups.clear();
          if (!stopped) {
            runOnce.run();
          }
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          log.warn("msg=\"background iteration failed, will retry\" loop={} err=\"{}\"", name,
              String.valueOf(e.getMessage()).replace('"', '\''));
        }
      }
    }, name);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  void wake() {
    wakeups.offer(Boolean.TRUE);
  }

  @Override
  public void close() {
    stopped = true;
    thread.interrupt();
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
