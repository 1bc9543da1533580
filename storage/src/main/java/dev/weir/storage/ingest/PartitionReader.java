package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one partition of the ingest topic into the storage. The {@link KafkaConsumer} lives on
 * one named thread ({@code partition-reader-N}); it is {@code assign()}ed to the partition and
 * positioned with {@code seek()} — never {@code subscribe()}: the consumer group only stores
 * offsets. See {@code DESIGN.md} in this package for the offset rules. Usage:
 *
 * <pre>{@code
 * PartitionReader r = new PartitionReader(config, 7, dataDir, pusher, tsdb::sync, metrics, System::currentTimeMillis);
 * r.onCaughtUp(ring::activate);
 * r.start();   // returns at once; /ready follows notReadyReason()
 * ...
 * r.stop(Duration.ofSeconds(30));  // drain, sync, final commit
 * }</pre>
 *
 * <p>The parts: {@link StartPosition} (where to begin), {@link ReaderPipeline} (decode and append),
 * {@link CommitTracker} and {@link OffsetCommitter} (what may be committed, and committing it),
 * {@link CatchUp} (when the reader is ready), {@link TopicWatch} (a deleted or re-created topic)
 * and {@link KafkaRetry} (every Kafka call survives a broker outage). A <em>session</em> is one
 * consumer and one pipeline; when anything in it fails unexpectedly the reader is not ready with
 * the reason, closes the session and starts a new one at its last applied offset, with backoff.
 *
 * <p>Thread-safe for the public methods.
 */
public final class PartitionReader {
  private static final Logger log = LoggerFactory.getLogger(PartitionReader.class);
  private static final long PARTITION_CHECK_MILLIS = 5_000;
  private static final long MAX_RESTART_BACKOFF_MILLIS = 30_000;
  /** Backlogs shorter than this are not worth starting concurrent fetchers for. */
  static final long MIN_CONCURRENT_FETCH_RECORDS = 1_000;

  private final KafkaConfig config;
  private final int partition;
  private final TopicPartition tp;
  private final Pusher pusher;
  private final ReaderMetrics metrics;
  private final LongSupplier clock;
  private final StartPosition startPosition;
  private final OffsetCommitter committer;
  private final CatchUp catchUp;
  private final TopicWatch topicWatch;
  private final KafkaRetry retry;
  private final CopyOnWriteArrayList<Runnable> caughtUpListeners = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private final Object appliedMonitor = new Object();
  private final @Nullable DeadLetterProducer deadLetter;

  private volatile boolean stopping;
  private volatile long drainMillis = 30_000;
  private volatile boolean caughtUp;
  private volatile @Nullable String blocked;
  private volatile @Nullable String kafkaProblem;
  private volatile @Nullable String failed;
  private long failedAt = -1;
  private volatile long applied = -1;
  private volatile long endOffsetSeen = -1;
  private volatile @Nullable KafkaConsumer<byte[], byte[]> consumer;
  private volatile @Nullable ReaderPipeline pipeline;
  private volatile @Nullable ConcurrentFetcher fetcher;
  // Session state, reader thread only.
  private CommitTracker tracker = new CommitTracker();
  private long expectedNext = -1;

  public PartitionReader(KafkaConfig config, int partition, Path dataDir, Pusher pusher, Runnable sync,
      ReaderMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.deadLetter = config.deadLetterTopic().isEmpty() ? null
        : new DeadLetterProducer(config.clientProperties(), config.deadLetterTopic(), config.maxRecordSizeBytes(),
            config.writeTimeout());
    this.partition = partition;
    this.tp = new TopicPartition(config.topic(), partition);
    this.pusher = pusher;
    this.metrics = metrics;
    this.clock = clock;
    OffsetFile offsetFile = new OffsetFile(dataDir, config.topic(), partition);
    this.startPosition = new StartPosition(config, tp, offsetFile, metrics);
    this.committer = new OffsetCommitter(tp, sync, offsetFile, metrics, clock, config.commitInterval());
    this.catchUp = new CatchUp(partition, config.maxLagAtStartup(), clock);
    this.topicWatch = new TopicWatch(config, tp, clock);
    this.retry = new KafkaRetry(partition, metrics, () -> stopping, p -> kafkaProblem = p);
    this.thread = new Thread(this::run, "partition-reader-" + partition);
    metrics.blockedGauge("topic_or_partition_missing", () -> blocked != null ? 1 : 0);
    metrics.blockedGauge("failed", () -> failed != null ? 1 : 0);
    metrics.blockedGauge("kafka_unavailable", () -> kafkaProblem != null ? 1 : 0);
    metrics.gauge("weir.ingest.storage.reader.buffered.bytes",
        "Record bytes in the reader pipeline (bounded by max-buffered-bytes).",
        () -> pipeline == null ? 0 : pipeline.bufferedBytes());
    metrics.gauge("weir.ingest.storage.reader.fetcher.buffered.bytes",
        "Record bytes held by concurrent fetchers and not yet in the pipeline (with the pipeline's, bounded by"
            + " max-buffered-bytes).", () -> {
          ConcurrentFetcher f = fetcher;
          return f == null ? 0 : f.heldBytes();
        });
    metrics.gauge("weir.ingest.storage.reader.inflight.records", "Records in the reader pipeline.",
        () -> pipeline == null ? 0 : pipeline.inFlight());
    metrics.gauge("weir.ingest.storage.reader.lag.seconds",
        "Seconds between now and the timestamp of the last record appended, while records remain to read; 0"
            + " when caught up to the end of the partition.", this::lagSeconds);
  }

  public int partition() {
    return partition;
  }

  /** Called once, on the reader thread, when the start-up catch-up is done. */
  public void onCaughtUp(Runnable r) {
    caughtUpListeners.add(r);
  }

  public void start() {
    thread.setDaemon(true);
    thread.start();
  }

  public boolean caughtUp() {
    return caughtUp;
  }

  /** The offset after the last record fully appended (Kafka's next-offset convention), or -1. */
  public long appliedOffset() {
    return applied;
  }

  /** Why the reader is not (yet) serving consistent data, or null. */
  public @Nullable String notReadyReason() {
    String f = failed;
    if (f != null) {
      return "partition reader failed and is restarting from offset " + applied + ": " + f;
    }
    String b = blocked;
    if (b != null) {
      return b;
    }
    if (!caughtUp) {
      String k = kafkaProblem;
      if (k != null) {
        return k;
      }
      long end = endOffsetSeen;
      return "catching up on partition " + partition + (end >= 0 && applied >= 0
          ? ": " + Math.max(0, end - applied) + " records behind" : "");
    }
    return null;
  }

  private double lagSeconds() {
    long lag = metrics.lagRecords.get();
    long ts = tracker.lastDoneTimestamp();
    if (lag <= 0 || ts < 0) {
      return lag == 0 ? 0 : -1;
    }
    return Math.max(0, clock.getAsLong() - ts) / 1000.0;
  }

  // ---- The reader thread: sessions ------------------------------------------------------------

  private void run() {
    long backoff = 1_000;
    while (!stopping) {
      try {
        runSession();
        return;
      } catch (WakeupException | InterruptedException e) {
        if (stopping) {
          return;
        }
        recordFailure(e);
      } catch (Throwable e) { // an Error too: the reader must restart, never silently stop
        recordFailure(e);
      }
      try {
        retry.sleep(backoff);
      } catch (WakeupException | InterruptedException e) {
        return;
      }
      backoff = Math.min(MAX_RESTART_BACKOFF_MILLIS, backoff * 2);
    }
  }

  private void recordFailure(Throwable e) {
    failed = e.toString();
    failedAt = applied;
    metrics.pipelineRestarts.increment();
    log.error("msg=\"partition reader failed; not ready, restarting from the last applied offset\" partition={}"
        + " offset={}", partition, applied, e);
  }

  /** One consumer and one pipeline, from the start (or resume) position until stop or failure. */
  private void runSession() throws InterruptedException {
    KafkaConsumer<byte[], byte[]> c = AssignedConsumers.create(config.clientProperties(),
        config.clientId() + "-reader-" + partition, config.consumerGroup(), config.dialTimeout(),
        AssignedConsumers.partitionFetchBytes(config.maxBufferedBytes()));
    consumer = c;
    ReaderPipeline p = null;
    try {
      waitForPartition(c);
      c.assign(List.of(tp));
      boolean resuming = failed != null;
      StartPosition.Start start = startPosition.resolve(c, retry, resuming ? applied : -1);
      if (!resuming && start.committed() >= 0) {
        committer.knownCommitted(start.committed());
      }
      moveTo(c, start.offset());
      p = newPipeline();
      pipeline = p;
      if (!caughtUp) {
        catchUp.startRound(endOffset(c), applied);
        if (catchUp.disabled()) {
          markCaughtUp();
        }
        if (config.fetchConcurrency() > 1 && catchUp.target() - start.offset() >= MIN_CONCURRENT_FETCH_RECORDS) {
          fetchConcurrently(c, p, start.offset(), catchUp.target());
        }
      }
      while (!stopping) {
        runOnce(c, p);
        checkPipeline(p);
        watchTopic(c, p);
      }
      finishOnStop(c, p);
    } finally {
      if (p != null) {
        p.close();
      }
      consumer = null;
      c.close(Duration.ofSeconds(5));
    }
  }

  private ReaderPipeline newPipeline() {
    // One CPU stays for fetching and decoding; more shards than that only add context switches
    // and garbage in flight (measured on 2 CPUs: 8 shards slower than the sequential loop,
    // 1 shard beside the decoder 1.2x faster). The flag is a maximum, as in Mimir.
    int shards = Math.min(config.ingestionConcurrency(),
        Math.max(1, Runtime.getRuntime().availableProcessors() - 1));
    if (shards != config.ingestionConcurrency()) {
      log.info("msg=\"ingestion concurrency capped at the number of CPUs less one\" partition={} configured={}"
          + " shards={}", partition, config.ingestionConcurrency(), shards);
    }
    return new ReaderPipeline(shards, config.batchSize(), config.maxBufferedBytes(), pusher,
        deadLetter == null ? null : deadLetter::send, metrics, clock, "partition-reader-" + partition);
  }

  /** Positions the consumer and the commit tracking at {@code offset}. */
  private void moveTo(KafkaConsumer<byte[], byte[]> c, long offset) {
    c.seek(tp, offset);
    expectedNext = offset;
    tracker = new CommitTracker();
    tracker.resetTo(offset);
    setApplied(offset);
  }

  private void setApplied(long offset) {
    applied = offset;
    synchronized (appliedMonitor) {
      appliedMonitor.notifyAll();
    }
  }

  /** A failed pipeline fails the session, which the reader then restarts. */
  private static void checkPipeline(ReaderPipeline p) {
    Throwable f = p.failure();
    if (f != null) {
      throw new IllegalStateException("reader pipeline failed: " + f, f);
    }
  }

  /** Stop requested: let the records in flight finish (within the stop timeout), then the final commit. */
  private void finishOnStop(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    if (!p.drain(drainMillis)) {
      log.warn("msg=\"records still in flight at shutdown; they will be read again after the restart\""
          + " partition={}", partition);
    }
    if (p.failure() == null) {
      updateApplied();
      committer.commitFinal(c, tracker.committable());
    }
  }

  /**
   * The start-up backlog {@code [from, to)} through a {@link ConcurrentFetcher}; then the reader's
   * own consumer continues from wherever this stopped (the end, or a failed window). The fetchers
   * get half of {@code max-buffered-bytes} and the pipeline the other half meanwhile.
   */
  private void fetchConcurrently(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p, long from, long to)
      throws InterruptedException {
    log.info("msg=\"fetching the backlog concurrently\" partition={} fetchers={} from={} to={}", partition,
        config.fetchConcurrency(), from, to);
    long budget = config.maxBufferedBytes() / 2;
    p.limitBufferedBytes(budget);
    int[] n = {0};
    try (ConcurrentFetcher f = new ConcurrentFetcher(tp, from, to, config.fetchConcurrency(), budget,
        fetchBytes -> AssignedConsumers.create(config.clientProperties(), config.clientId() + "-fetcher-" + partition
            + "-" + n[0]++, config.consumerGroup(), config.dialTimeout(), fetchBytes), metrics)) {
      fetcher = f;
      while (!stopping && !f.finished()) {
        List<ConsumerRecord<byte[], byte[]>> records;
        try {
          records = f.next(200);
        } catch (KafkaException e) {
          metrics.fetchErrors.increment();
          log.warn("msg=\"concurrent fetch failed; continuing with one consumer\" partition={} offset={} err=\"{}\"",
              partition, expectedNext, e.toString());
          break;
        }
        if (records != null) {
          metrics.concurrentlyFetched.increment(records.size());
          handle(c, p, records);
        }
        advance(c);
        checkPipeline(p);
      }
    } finally {
      fetcher = null;
      p.limitBufferedBytes(config.maxBufferedBytes());
    }
    c.seek(tp, expectedNext);
    log.info("msg=\"concurrent fetching done; one consumer continues\" partition={} offset={}", partition,
        expectedNext);
  }

  /** Waits (not ready, with a metric and a log line) while the topic or partition does not exist. */
  private void waitForPartition(KafkaConsumer<byte[], byte[]> c) throws InterruptedException {
    while (!stopping) {
      String problem = null;
      List<PartitionInfo> parts = retry.call("reading the topic's partitions",
          () -> c.partitionsFor(config.topic(), Duration.ofSeconds(10)));
      if (parts == null || parts.isEmpty()) {
        problem = "topic " + config.topic() + " does not exist";
      } else if (parts.stream().noneMatch(i -> i.partition() == partition)) {
        problem = "partition " + partition + " does not exist: topic " + config.topic() + " has " + parts.size()
            + " partitions";
      }
      if (problem == null) {
        if (blocked != null) {
          log.info("msg=\"partition available, starting to consume\" partition={}", partition);
        }
        blocked = null;
        return;
      }
      if (!problem.equals(blocked)) {
        log.error("msg=\"cannot consume: {}; waiting for it (not ready meanwhile)\" partition={}", problem, partition);
      }
      blocked = problem;
      retry.sleep(PARTITION_CHECK_MILLIS);
    }
  }

  private long endOffset(KafkaConsumer<byte[], byte[]> c) throws InterruptedException {
    long e = retry.call("reading the end offset", () -> c.endOffsets(List.of(tp)).get(tp));
    endOffsetSeen = e;
    return e;
  }

  // ---- The reader thread: fetching -----------------------------------------------------------

  private void runOnce(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    ConsumerRecords<byte[], byte[]> records;
    try {
      records = c.poll(Duration.ofMillis(200));
    } catch (OffsetOutOfRangeException e) {
      resetPosition(c, p);
      return;
    } catch (WakeupException e) {
      return;
    } catch (KafkaException e) {
      metrics.fetchErrors.increment();
      log.warn("msg=\"fetch failed, retrying (records already fetched are kept)\" partition={} err=\"{}\"", partition,
          e.toString());
      retry.sleep(500);
      return;
    }
    handle(c, p, records.records(tp));
  }

  /** Hands fetched records (in offset order) to the pipeline: gap check, metrics, commit tracking. */
  private void handle(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p, Iterable<ConsumerRecord<byte[], byte[]>> records)
      throws InterruptedException {
    for (ConsumerRecord<byte[], byte[]> r : records) {
      if (r.offset() > expectedNext) {
        long gap = r.offset() - expectedNext;
        metrics.missedRecords.increment(gap);
        log.error("msg=\"gap in the partition's offsets: records missed\" partition={} expected={} got={} missed={}",
            partition, expectedNext, r.offset(), gap);
      }
      expectedNext = r.offset() + 1;
      int size = (r.value() == null ? 0 : r.value().length) + (r.key() == null ? 0 : r.key().length);
      metrics.recordsConsumed.increment();
      metrics.bytesConsumed.increment(size);
      CommitTracker.Entry e = new CommitTracker.Entry(r.offset(), r.timestamp(), size);
      tracker.add(e);
      while (!p.submit(r, e, 100)) {
        // The pipeline is full: keep committing what is done meanwhile.
        advance(c);
        checkPipeline(p);
        if (stopping) {
          return;
        }
      }
    }
    advance(c);
  }

  /**
   * The fetch position is no longer in the partition (OffsetOutOfRangeException): retention
   * deleted it, the partition was truncated, or the topic was re-created. Lets the records in
   * flight finish, then moves to the log start (deleted: records counted as missed; re-created:
   * the new topic is read from its start) or the end (truncated), logged and counted.
   */
  private void resetPosition(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    awaitPipelineEmpty(c, p);
    long begin = retry.call("reading the log start offset", () -> c.beginningOffsets(List.of(tp)).get(tp));
    long end = endOffset(c);
    long to;
    if (topicWatch.recreatedNow()) {
      metrics.offsetReset("topic_recreated");
      log.error("msg=\"topic re-created: reading the new topic from its start\" partition={} position={}"
          + " log_start={} end={}", partition, expectedNext, begin, end);
      to = begin;
    } else {
      to = startPosition.clamp(expectedNext, begin, end);
    }
    moveTo(c, to);
  }

  private void awaitPipelineEmpty(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    while (!p.drain(100)) {
      checkPipeline(p);
      advance(c);
      if (stopping) {
        throw new WakeupException();
      }
    }
    advance(c);
  }

  /** Surfaces a deleted topic (not ready) and re-reads a re-created one from its start. */
  private void watchTopic(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    TopicWatch.Observation o = topicWatch.poll();
    if (o == null) {
      return;
    }
    switch (o.kind()) {
      case MISSING -> {
        if (!o.detail().equals(blocked)) {
          log.error("msg=\"cannot consume: {}; not ready until it is back\" partition={}", o.detail(), partition);
        }
        blocked = o.detail();
      }
      case PRESENT -> {
        if (blocked != null) {
          log.info("msg=\"topic available again\" partition={}", partition);
        }
        blocked = null;
      }
      case RECREATED -> {
        blocked = null;
        awaitPipelineEmpty(c, p);
        metrics.offsetReset("topic_recreated");
        long begin = retry.call("reading the log start offset", () -> c.beginningOffsets(List.of(tp)).get(tp));
        log.error("msg=\"{}: reading the new topic from its start\" partition={} position={} log_start={}", o.detail(),
            partition, expectedNext, begin);
        moveTo(c, begin);
      }
      default -> throw new IllegalStateException("unknown observation " + o.kind());
    }
  }

  /** Updates the applied position, lag, commits when due, and the catch-up state. */
  private void advance(KafkaConsumer<byte[], byte[]> c) throws InterruptedException {
    updateApplied();
    OptionalLong lag = c.currentLag(tp);
    if (lag.isPresent()) {
      long hw = c.position(tp) + lag.getAsLong();
      endOffsetSeen = Math.max(endOffsetSeen, hw);
      metrics.lagRecords.set(Math.max(0, hw - applied));
    } else if (endOffsetSeen >= 0) {
      metrics.lagRecords.set(Math.max(0, endOffsetSeen - applied)); // e.g. while fetchers read ahead
    }
    committer.maybeCommit(c, tracker.committable());
    if (failed != null && (applied > failedAt || (tracker.inFlight() == 0 && applied >= endOffsetSeen))) {
      log.info("msg=\"partition reader recovered\" partition={} offset={}", partition, applied);
      failed = null;
    }
    if (!caughtUp) {
      switch (catchUp.check(applied)) {
        case DONE -> markCaughtUp();
        case NEXT_ROUND -> catchUp.startRound(endOffset(c), applied);
        default -> catchUp.logProgress(applied, endOffsetSeen, lagSeconds());
      }
    }
  }

  private void updateApplied() {
    long done = tracker.committable();
    if (done >= 0 && done != applied) {
      setApplied(done);
    }
  }

  private void markCaughtUp() {
    caughtUp = true;
    kafkaProblem = null;
    log.info("msg=\"partition reader caught up\" partition={} offset={}", partition, applied);
    for (Runnable r : caughtUpListeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.error("msg=\"caught-up listener failed\"", e);
      }
    }
  }

  // ---- Strong read consistency -----------------------------------------------------------------

  /** The partition's end offset now (what a strong read must wait for). */
  public long currentEndOffset() {
    return topicWatch.currentEndOffset();
  }

  /**
   * Waits until every record before {@code endOffset} is appended.
   *
   * @throws ServerErrorException when that does not happen within the timeout
   */
  public void awaitApplied(long endOffset, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (appliedMonitor) {
      while (applied < endOffset) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || failed != null) {
          throw new ServerErrorException("strong read: partition " + partition + " has not consumed up to offset "
              + endOffset + " (at " + applied + ") within " + timeout);
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(appliedMonitor, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ServerErrorException("interrupted during a strong read", e);
        }
      }
    }
  }

  // ---- Shutdown ------------------------------------------------------------------------------

  /**
   * Graceful stop: the reader thread stops fetching, lets the records in flight finish (within the
   * timeout), fsyncs, commits a last time and closes its consumer; this waits for that.
   */
  public void stop(Duration timeout) {
    drainMillis = timeout.toMillis();
    stopping = true;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    try {
      // Drain, the final commit (up to 10 s) and closing the consumer (up to 5 s) come after the drain.
      thread.join(timeout.toMillis() + 20_000);
      if (thread.isAlive()) {
        log.warn("msg=\"partition reader did not stop in time\" partition={}", partition);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (deadLetter != null) {
        deadLetter.close();
      }
      topicWatch.close();
    }
  }
}
