package dev.weir.storage.ingest;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reader's processing stages:
 *
 * <pre>
 *  fetch thread ──submit──► decode pool (N) ──► dispatcher (offset order) ──► shard queues ──► N shard workers
 *                                                   split by series hash          bounded          append, retry
 * </pre>
 *
 * Records are decoded concurrently but dispatched in offset order, and each series always goes
 * to the same shard, so one series is appended in offset order. Shard workers merge consecutive
 * parts of the same tenant into appends of up to {@code batchSize} series. Back-pressure: the
 * fetch thread waits while the records in the pipeline exceed {@code maxBufferedBytes}, and full
 * shard queues hold the dispatcher; the number of records in flight is bounded too, since decoded
 * requests are several times their serialized size. Server errors are retried with backoff until they clear (the
 * record stays in flight, so nothing after it can be committed); client errors (the valid part was
 * stored) are counted by reason and the part is done; an undecodable record is skipped whole; any
 * other exception or {@link Error} fails the pipeline ({@link #failure()}): the reader then marks
 * itself not ready and rebuilds a pipeline from its last applied offset. With {@code shards == 0}
 * records are decoded and appended on the fetch thread itself (the sequential loop), so a failure
 * is thrown to the caller.
 *
 * <p>Threads are never interrupted: a shard may be inside a WAL write, and an interrupt closes a
 * {@link java.nio.channels.FileChannel}. {@link #close()} sets a flag that every wait (queue polls,
 * retry backoff) checks at least every {@value #POLL_MILLIS} ms.
 *
 * <p>Thread-safe for the calls documented on each method.
 */
final class ReaderPipeline implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ReaderPipeline.class);
  private static final int SHARD_QUEUE_PARTS = 64;
  /**
   * Records in flight per worker. Decoded requests are several times their record size, so the
   * byte bound alone would let hundreds of MiB of decoded objects queue up; a few records per
   * worker keep every stage busy.
   */
  private static final int RECORDS_PER_WORKER = 4;
  private static final long MAX_BACKOFF_MILLIS = 5_000;
  /** How long a worker waits on a queue before it looks at the closed flag again. */
  static final long POLL_MILLIS = 100;

  /** Sends an undecodable record to the dead-letter topic; may throw ServerErrorException. */
  interface DeadLetter {
    void send(ConsumerRecord<byte[], ByteBuffer> record, String error);
  }

  private record Pending(CommitTracker.Entry entry, ConsumerRecord<byte[], ByteBuffer> record, Future<Object> decoded) {}

  private record Part(CommitTracker.Entry entry, AtomicInteger remaining, String tenant, WireBatch series) {}

  private static final ThreadLocal<WireSeries> CURSOR = ThreadLocal.withInitial(WireSeries::new);

  private final int shards;
  private final int batchSize;
  private volatile long maxBufferedBytes;
  private final long maxInFlightRecords;
  private final Pusher pusher;
  private final @Nullable DeadLetter deadLetter;
  private final ReaderMetrics metrics;
  private final LongSupplier clock;

  private final Object bytesLock = new Object();
  private long bufferedBytes;
  private final AtomicLong inFlight = new AtomicLong();

  private final @Nullable ExecutorService decodePool;
  private final LinkedBlockingQueue<Pending> ordered = new LinkedBlockingQueue<>();
  private final List<ArrayBlockingQueue<Part>> shardQueues = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean closed;
  private volatile @Nullable Throwable failure;

  ReaderPipeline(int shards, int batchSize, long maxBufferedBytes, Pusher pusher, @Nullable DeadLetter deadLetter,
      ReaderMetrics metrics, LongSupplier clock, String name) {
    this.shards = shards;
    this.batchSize = Math.max(1, batchSize);
    this.maxBufferedBytes = maxBufferedBytes;
    this.maxInFlightRecords = Math.max(16, (long) RECORDS_PER_WORKER * shards);
    this.pusher = pusher;
    this.deadLetter = deadLetter;
    this.metrics = metrics;
    this.clock = clock;
    if (shards > 0) {
      AtomicInteger n = new AtomicInteger();
      // Decoding is CPU work without waits: more threads than cores only add garbage in flight.
      int decoders = Math.min(shards, Runtime.getRuntime().availableProcessors());
      decodePool = Executors.newFixedThreadPool(decoders, r -> {
        Thread t = new Thread(r, name + "-decode-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      for (int i = 0; i < shards; i++) {
        shardQueues.add(new ArrayBlockingQueue<>(SHARD_QUEUE_PARTS));
        int shard = i;
        threads.add(new Thread(() -> runShard(shard), name + "-shard-" + i));
      }
      threads.add(new Thread(this::runDispatcher, name + "-dispatch"));
      threads.forEach(t -> {
        t.setDaemon(true);
        t.start();
      });
    } else {
      decodePool = null;
    }
  }

  double bufferedBytes() {
    synchronized (bytesLock) {
      return bufferedBytes;
    }
  }

  long inFlight() {
    return inFlight.get();
  }

  /**
   * Changes the byte bound (the reader gives half of its budget to concurrent fetchers while they
   * run); records already in the pipeline stay.
   */
  void limitBufferedBytes(long bytes) {
    synchronized (bytesLock) {
      maxBufferedBytes = bytes;
      bytesLock.notifyAll();
    }
  }

  /** Why the pipeline stopped working (an unexpected exception), or null. */
  @Nullable Throwable failure() {
    return failure;
  }

  /**
   * Hands a record over; called by the fetch thread in offset order.
   *
   * @return false when the pipeline is full for longer than {@code waitMillis} (call again)
   */
  boolean submit(ConsumerRecord<byte[], ByteBuffer> record, CommitTracker.Entry entry, long waitMillis)
      throws InterruptedException {
    synchronized (bytesLock) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
      while (!closed && failure == null && bufferedBytes > 0 && (bufferedBytes + entry.bytes > maxBufferedBytes
          || inFlight.get() >= maxInFlightRecords)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(bytesLock, left);
      }
      if (closed || failure != null) {
        return false;
      }
      bufferedBytes += entry.bytes;
    }
    inFlight.incrementAndGet();
    if (decodePool == null) {
      processSequentially(record, entry);
      return true;
    }
    Future<Object> decoded = decodePool.submit(() -> decode(record));
    ordered.put(new Pending(entry, record, decoded));
    return true;
  }

  private static Object decode(ConsumerRecord<byte[], ByteBuffer> r) {
    try {
      return RecordFormat.decodeWire(r.key(), r.value(), r.headers(), CURSOR.get());
    } catch (ClientErrorException e) {
      return e;
    }
  }

  private void processSequentially(ConsumerRecord<byte[], ByteBuffer> record, CommitTracker.Entry entry)
      throws InterruptedException {
    Object d = decode(record);
    if (d instanceof ClientErrorException e) {
      undecodable(record, e);
      complete(entry, true);
    } else {
      RecordFormat.DecodedWire dec = (RecordFormat.DecodedWire) d;
      push(dec.tenant(), dec.batch(), entry.offset, entry.timestampMillis);
      complete(entry, false);
    }
  }

  private void undecodable(ConsumerRecord<byte[], ByteBuffer> record, ClientErrorException e) throws InterruptedException {
    metrics.clientError(e.reason());
    log.warn("msg=\"skipping undecodable record\" partition={} offset={} reason={} err=\"{}\"", record.partition(),
        record.offset(), e.reason(), e.getMessage());
    DeadLetter dl = deadLetter;
    if (dl != null) {
      long backoff = 100;
      while (true) {
        try {
          dl.send(record, e.getMessage());
          return;
        } catch (ServerErrorException se) {
          metrics.retries.increment();
          log.warn("msg=\"dead-letter write failed, retrying\" offset={} err=\"{}\"", record.offset(), se.getMessage());
          pause(backoff);
          backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
      }
    }
  }

  /** Sleeps in short steps, so that {@link #close()} is seen without an interrupt. */
  private void pause(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      if (closed) {
        throw new InterruptedException("pipeline closed");
      }
      TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
    }
  }

  /**
   * Appends with retries on server errors until it succeeds. A client error means the valid part
   * was stored and the rest refused: counted by reason, and the append counts as done.
   */
  private void push(String tenant, WireBatch request, long sourceOffset, long recordTimestamp)
      throws InterruptedException {
    long backoff = 100;
    while (true) {
      if (closed) {
        throw new InterruptedException("pipeline closed");
      }
      try {
        pusher.push(tenant, request, sourceOffset, recordTimestamp);
        return;
      } catch (ClientErrorException e) {
        metrics.clientError(e.reason());
        return;
      } catch (ServerErrorException e) {
        metrics.retries.increment();
        log.warn("msg=\"append failed with a server error; holding the partition and retrying\" user={} backoff_ms={}"
            + " err=\"{}\"", tenant, backoff, String.valueOf(e.getMessage()).replace('"', '\''));
        pause(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }

  /** Marks a record done; {@code skipped} when it was refused entirely (undecodable). */
  private void complete(CommitTracker.Entry entry, boolean skipped) {
    entry.done();
    (skipped ? metrics.recordsClientError : metrics.recordsOk).increment();
    long latency = clock.getAsLong() - entry.timestampMillis;
    if (latency >= 0) {
      metrics.processingLatency.record(latency, TimeUnit.MILLISECONDS);
    }
    inFlight.decrementAndGet();
    synchronized (bytesLock) {
      bufferedBytes -= entry.bytes;
      bytesLock.notifyAll();
    }
  }

  private void runDispatcher() {
    try {
      while (!closed) {
        Pending p = ordered.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
        if (p == null) {
          continue;
        }
        Object d = awaitDecoded(p);
        if (d == null) {
          return; // closed
        }
        if (d instanceof ClientErrorException e) {
          undecodable(p.record(), e);
          complete(p.entry(), true);
          continue;
        }
        RecordFormat.DecodedWire dec = (RecordFormat.DecodedWire) d;
        dispatch(p.entry(), dec.tenant(), dec.batch());
      }
    } catch (InterruptedException e) {
      // closing
    } catch (Throwable e) { // an Error too: a dead dispatcher must not go unnoticed
      fail(e);
    }
  }

  private @Nullable Object awaitDecoded(Pending p) throws InterruptedException {
    while (!closed) {
      try {
        return p.decoded().get(POLL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // look at the closed flag again
      } catch (ExecutionException e) {
        throw new IllegalStateException("decoding failed unexpectedly: " + e.getCause(), e.getCause());
      }
    }
    return null;
  }

  private void putPart(int shard, Part part) throws InterruptedException {
    ArrayBlockingQueue<Part> q = shardQueues.get(shard);
    while (!q.offer(part, POLL_MILLIS, TimeUnit.MILLISECONDS)) {
      if (closed) {
        throw new InterruptedException("pipeline closed");
      }
    }
  }

  private void dispatch(CommitTracker.Entry entry, String tenant, WireBatch req) throws InterruptedException {
    WireBatch[] byShard = new WireBatch[shards];
    int parts = 0;
    int only = oneShard(req);
    if (only >= 0) {
      byShard[only] = req; // every series goes to one shard (always so with one): no copy
      parts = 1;
    } else {
      for (int i = 0; i < req.size(); i++) {
        int s = shardOf(req.hash(i), shards);
        if (byShard[s] == null) {
          byShard[s] = new WireBatch(req.size() / shards + 16);
          parts++;
        }
        byShard[s].add(req, i);
      }
    }
    boolean hasMetadata = !req.metadata().isEmpty();
    if (parts == 0 && !hasMetadata) {
      complete(entry, false);
      return;
    }
    if (parts == 0) {
      parts = 1; // metadata only: shard 0 takes it
      byShard[0] = new WireBatch();
    }
    AtomicInteger remaining = new AtomicInteger(parts);
    boolean metadataSent = false;
    for (int s = 0; s < shards; s++) {
      if (byShard[s] != null) {
        if (!metadataSent) {
          if (byShard[s] != req) {
            byShard[s].addMetadata(req.metadata());
          }
          metadataSent = true;
        }
        putPart(s, new Part(entry, remaining, tenant, byShard[s]));
      }
    }
  }

  /** The shard every series of {@code req} goes to, or -1 when they go to several (or there are none). */
  private int oneShard(WireBatch req) {
    if (req.size() == 0) {
      return -1;
    }
    if (shards == 1) {
      return 0;
    }
    int first = shardOf(req.hash(0), shards);
    for (int i = 1; i < req.size(); i++) {
      if (shardOf(req.hash(i), shards) != first) {
        return -1;
      }
    }
    return first;
  }

  /**
   * The shard of a series from its labels' hash ({@link WireBatch#hash}, the same whatever the
   * order its labels arrive in), so one series always goes to the same shard.
   */
  static int shardOf(int labelsHash, int shards) {
    int h = labelsHash * 0x9E3779B9;
    return Math.floorMod(h ^ (h >>> 16), shards);
  }

  private void runShard(int shard) {
    ArrayBlockingQueue<Part> q = shardQueues.get(shard);
    List<Part> batch = new ArrayList<>();
    try {
      while (!closed) {
        batch.clear();
        Part first = q.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        batch.add(first);
        int series = first.series().size();
        Part next;
        while (series < batchSize && (next = q.peek()) != null && next.tenant().equals(first.tenant())) {
          batch.add(q.poll());
          series += next.series().size();
        }
        WireBatch req = first.series();
        long recordTime = first.entry().timestampMillis;
        for (Part p : batch) {
          recordTime = Math.max(recordTime, p.entry().timestampMillis); // consecutive records
        }
        if (batch.size() > 1) {
          req = new WireBatch(series);
          for (Part p : batch) {
            for (int i = 0; i < p.series().size(); i++) {
              req.add(p.series(), i);
            }
            req.addMetadata(p.series().metadata());
          }
        }
        push(first.tenant(), req, first.entry().offset, recordTime); // parts queue in offset order: the lowest
        for (Part p : batch) {
          if (p.remaining().decrementAndGet() == 0) {
            complete(p.entry(), false);
          }
        }
      }
    } catch (InterruptedException e) {
      // closing
    } catch (Throwable e) { // an Error too: a dead shard must not go unnoticed
      fail(e);
    }
  }

  private void fail(Throwable t) {
    synchronized (bytesLock) {
      if (failure == null) {
        failure = t;
        log.error("msg=\"reader pipeline failed with an unexpected error; the reader rebuilds it\"", t);
      }
      bytesLock.notifyAll(); // a fetch thread waiting for room sees the failure at once
    }
  }

  /** Waits until every submitted record is done, the pipeline failed, or the timeout passed. */
  boolean drain(long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (inFlight.get() > 0 && failure == null && System.currentTimeMillis() < deadline) {
      Thread.sleep(10);
    }
    return inFlight.get() == 0;
  }

  /**
   * Stops the workers without interrupting them (see the class comment): each finishes the append
   * in hand and leaves within {@value #POLL_MILLIS} ms, or at most 5 s each.
   */
  @Override
  public void close() {
    closed = true;
    synchronized (bytesLock) {
      bytesLock.notifyAll();
    }
    for (Thread t : threads) {
      try {
        t.join(5_000);
        if (t.isAlive()) {
          log.warn("msg=\"pipeline thread still busy after close; it stops after its current append\" thread={}",
              t.getName());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (decodePool != null) {
      decodePool.shutdownNow();
    }
  }
}
