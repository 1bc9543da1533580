package dev.weir.storage.ingest;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the offsets {@code [from, to)} of one partition with several consumers at once, each
 * fetching the next unclaimed window of consecutive offsets, and hands the records over in offset
 * order ({@code --ingest-storage.kafka.fetch-concurrency-max}, like Mimir's concurrent fetchers).
 * It helps when each fetch waits on the broker or the network rather than on the reader's CPU.
 *
 * <p>Memory is bounded by {@code maxAheadBytes}: at most {@code 2 × fetchers} windows are claimed
 * and not yet handed over, windows aim at {@code maxAheadBytes / (2 × fetchers)} bytes (sized from
 * the record sizes seen), no new window is claimed while the records held reach {@code
 * maxAheadBytes} (so one window's overshoot is the most it can exceed by), and each fetcher's
 * consumer fetches at most a window's bytes at a time. A window whose fetch fails with anything but a transient error is handed over as that
 * error; the caller then falls back to its own consumer from its position. The consumers never
 * commit: offsets stay the caller's business.
 *
 * <p>{@link #next} and {@link #close} are called by one thread (the reader's).
 */
final class ConcurrentFetcher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ConcurrentFetcher.class);
  private static final int FIRST_WINDOW_RECORDS = 50;

  private static final class Window {
    final long start;
    final long end;
    final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    boolean done;
    long bytes;
    @Nullable KafkaException failure;

    Window(long start, long end) {
      this.start = start;
      this.end = end;
    }
  }

  private final TopicPartition tp;
  private final long to;
  private final int maxWindows;
  private final long windowBytes;
  private final long maxAheadBytes;
  private long heldBytes;
  private final ReaderMetrics metrics;
  private final ArrayDeque<Window> claimed = new ArrayDeque<>();
  private final List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private long nextStart;
  private int windowRecords = FIRST_WINDOW_RECORDS;
  private volatile boolean closed;

  ConcurrentFetcher(TopicPartition tp, long from, long to, int fetchers, long maxAheadBytes,
      IntFunction<KafkaConsumer<byte[], byte[]>> newConsumer, ReaderMetrics metrics) {
    this.tp = tp;
    this.to = to;
    this.nextStart = from;
    this.maxWindows = 2 * fetchers;
    this.maxAheadBytes = maxAheadBytes;
    this.windowBytes = Math.max(64 << 10, maxAheadBytes / maxWindows);
    this.metrics = metrics;
    for (int i = 0; i < fetchers; i++) {
      KafkaConsumer<byte[], byte[]> c = newConsumer.apply((int) Math.min(8 << 20, Math.max(64 << 10, windowBytes)));
      c.assign(List.of(tp));
      consumers.add(c);
      Thread t = new Thread(() -> run(c), "partition-reader-" + tp.partition() + "-fetcher-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
  }

  private void run(KafkaConsumer<byte[], byte[]> c) {
    try {
      while (!closed) {
        Window w = claim();
        if (w == null) {
          return;
        }
        fetch(c, w);
      }
    } catch (InterruptedException | WakeupException e) {
      // closing
    }
  }

  /** The next window to fetch, waiting while too many are ahead; null when the range is done. */
  private synchronized @Nullable Window claim() throws InterruptedException {
    while (!closed && (claimed.size() >= maxWindows || heldBytes >= maxAheadBytes)) {
      wait(100);
    }
    if (closed || nextStart >= to) {
      return null;
    }
    Window w = new Window(nextStart, Math.min(to, nextStart + windowRecords));
    nextStart = w.end;
    claimed.addLast(w);
    return w;
  }

  private void fetch(KafkaConsumer<byte[], byte[]> c, Window w) {
    KafkaException failure = null;
    long bytes = 0;
    try {
      c.seek(tp, w.start);
      int transientErrors = 0;
      while (!closed) {
        try {
          for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200)).records(tp)) {
            if (r.offset() >= w.start && r.offset() < w.end) {
              w.records.add(r);
              bytes += size(r);
            }
          }
        } catch (WakeupException e) {
          throw e;
        } catch (KafkaException e) {
          if (e instanceof org.apache.kafka.common.errors.RetriableException && ++transientErrors < 10) {
            metrics.fetchErrors.increment();
            continue;
          }
          throw e;
        }
        if (c.position(tp) >= w.end) {
          break;
        }
      }
    } catch (WakeupException e) {
      throw e;
    } catch (KafkaException e) {
      failure = e;
    } catch (Throwable e) { // a bug or an Error: hand the window over as a failure, never leave it undone
      failure = new KafkaException("fetcher failed unexpectedly: " + e, e);
    }
    synchronized (this) {
      w.failure = failure;
      w.done = true;
      w.bytes = bytes;
      heldBytes += bytes;
      if (!w.records.isEmpty() && bytes > 0) {
        long perRecord = Math.max(1, bytes / w.records.size());
        windowRecords = (int) Math.max(10, Math.min(10_000, windowBytes / perRecord));
      }
      notifyAll();
    }
  }

  /**
   * The records of the next window in offset order (possibly empty), null when nothing arrived
   * within the wait, or an empty list with {@link #finished()} true once the range is handed over.
   *
   * @throws KafkaException when the window could not be fetched (the caller falls back)
   */
  synchronized @Nullable List<ConsumerRecord<byte[], byte[]>> next(long waitMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    while (true) {
      Window w = claimed.peekFirst();
      if (w == null && nextStart >= to) {
        return List.of();
      }
      if (w != null && w.done) {
        claimed.removeFirst();
        heldBytes -= w.bytes;
        notifyAll();
        if (w.failure != null) {
          throw w.failure;
        }
        return w.records;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** Record bytes fetched and not yet handed over (bounded by {@code maxAheadBytes} plus one window). */
  synchronized long heldBytes() {
    return heldBytes;
  }

  private static long size(ConsumerRecord<byte[], byte[]> r) {
    return (r.value() == null ? 0 : r.value().length) + (r.key() == null ? 0 : r.key().length);
  }

  /** Whether every window of the range was handed over. */
  synchronized boolean finished() {
    return claimed.isEmpty() && nextStart >= to;
  }

  @Override
  public void close() {
    closed = true;
    synchronized (this) {
      notifyAll();
    }
    consumers.forEach(KafkaConsumer::wakeup);
    for (Thread t : threads) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (KafkaConsumer<byte[], byte[]> c : consumers) {
      try {
        c.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        log.warn("msg=\"closing a fetcher consumer failed\" err=\"{}\"", e.toString());
      }
    }
  }
}
