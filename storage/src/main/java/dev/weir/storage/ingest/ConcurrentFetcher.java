package dev.weir.storage.ingest;

import java.nio.ByteBuffer;
import java.time.Duration;
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
 * <p>Memory is bounded by {@code maxAheadBytes}: windows hold at most {@code windowBytes =
 * maxAheadBytes / slots} bytes each, where {@code slots = min(2 × fetchers, maxAheadBytes / 16 KiB)}
 * (at least 1), and at most {@code slots} windows are being fetched or waiting to be handed over. A
 * fetcher cuts its window at the first record that would take it past {@code windowBytes}; the rest
 * of the window's range goes back to be claimed next, ahead of any new window. So the records held
 * never exceed {@code maxAheadBytes}, except that a window always holds at least one record (a single
 * record larger than {@code windowBytes} is held whole). Window lengths in records adapt to the
 * record sizes seen, so that few windows are cut. Each fetcher's consumer fetches at most a window's
 * bytes at a time. A window whose fetch fails with anything but a transient error is handed over as
 * that error; the caller then falls back to its own consumer from its position. The consumers never
 * commit: offsets stay the caller's business.
 *
 * <p>{@link #next} and {@link #close} are called by one thread (the reader's).
 */
final class ConcurrentFetcher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ConcurrentFetcher.class);
  private static final int FIRST_WINDOW_RECORDS = 50;
  private static final long MIN_WINDOW_BYTES = 16 << 10;

  private static final class Window {
    final long start;
    long end;
    final List<ConsumerRecord<byte[], ByteBuffer>> records = new ArrayList<>();
    boolean assigned;
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
  private long heldBytes;
  private final ReaderMetrics metrics;
  /** Windows not yet handed over, in offset order; unassigned ones are the rests of cut windows. */
  private final List<Window> claimed = new ArrayList<>();
  private int active;
  private final List<KafkaConsumer<byte[], ByteBuffer>> consumers = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private long nextStart;
  private int windowRecords = FIRST_WINDOW_RECORDS;
  private volatile boolean closed;

  ConcurrentFetcher(TopicPartition tp, long from, long to, int fetchers, long maxAheadBytes,
      IntFunction<KafkaConsumer<byte[], ByteBuffer>> newConsumer, ReaderMetrics metrics) {
    this.tp = tp;
    this.to = to;
    this.nextStart = from;
    this.maxWindows = (int) Math.max(1, Math.min(2L * fetchers, maxAheadBytes / MIN_WINDOW_BYTES));
    this.windowBytes = Math.max(1, maxAheadBytes / maxWindows);
    this.metrics = metrics;
    for (int i = 0; i < fetchers; i++) {
      KafkaConsumer<byte[], ByteBuffer> c = newConsumer.apply((int) Math.min(8 << 20, Math.max(MIN_WINDOW_BYTES, windowBytes)));
      c.assign(List.of(tp));
      consumers.add(c);
      Thread t = new Thread(() -> run(c), "partition-reader-" + tp.partition() + "-fetcher-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
  }

  private void run(KafkaConsumer<byte[], ByteBuffer> c) {
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

  /**
   * The next window to fetch: the rest of a cut window first, else a new one; waiting while every
   * slot is taken. Null when the range is done or the fetcher closes.
   */
  private synchronized @Nullable Window claim() throws InterruptedException {
    while (!closed) {
      Window rest = firstUnassigned();
      // The head of the list always proceeds, whatever the slots: it is what the reader waits for.
      if (rest != null && (active < maxWindows || rest == claimed.get(0))) {
        rest.assigned = true;
        active++;
        return rest;
      }
      if (rest == null && nextStart >= to) {
        return null;
      }
      if (rest == null && active < maxWindows) {
        Window w = new Window(nextStart, Math.min(to, nextStart + windowRecords));
        nextStart = w.end;
        w.assigned = true;
        active++;
        claimed.add(w);
        return w;
      }
      wait(100);
    }
    return null;
  }

  private @Nullable Window firstUnassigned() {
    for (Window w : claimed) {
      if (!w.assigned) {
        return w;
      }
    }
    return null;
  }

  private void fetch(KafkaConsumer<byte[], ByteBuffer> c, Window w) {
    KafkaException failure = null;
    long bytes = 0;
    long cutAt = -1;
    try {
      c.seek(tp, w.start);
      int transientErrors = 0;
      fetching:
      while (!closed) {
        try {
          for (ConsumerRecord<byte[], ByteBuffer> r : c.poll(Duration.ofMillis(200)).records(tp)) {
            if (r.offset() >= w.start && r.offset() < w.end) {
              long size = size(r);
              if (!w.records.isEmpty() && bytes + size > windowBytes) {
                cutAt = r.offset();
                break fetching;
              }
              w.records.add(AssignedConsumers.unpinned(r));
              bytes += size;
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
      if (cutAt >= 0 && failure == null) {
        Window rest = new Window(cutAt, w.end);
        w.end = cutAt;
        claimed.add(claimed.indexOf(w) + 1, rest);
      }
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
  synchronized @Nullable List<ConsumerRecord<byte[], ByteBuffer>> next(long waitMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    while (true) {
      Window w = claimed.isEmpty() ? null : claimed.get(0);
      if (w == null && nextStart >= to) {
        return List.of();
      }
      if (w != null && w.done) {
        claimed.remove(0);
        active--;
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

  /** Record bytes fetched and not yet handed over (bounded by {@code maxAheadBytes}, see the class comment). */
  synchronized long heldBytes() {
    return heldBytes;
  }

  private static long size(ConsumerRecord<byte[], ByteBuffer> r) {
    return (r.value() == null ? 0 : r.value().remaining()) + (r.key() == null ? 0 : r.key().length);
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
    for (KafkaConsumer<byte[], ByteBuffer> c : consumers) {
      try {
        c.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        log.warn("msg=\"closing a fetcher consumer failed\" err=\"{}\"", e.toString());
      }
    }
  }
}
