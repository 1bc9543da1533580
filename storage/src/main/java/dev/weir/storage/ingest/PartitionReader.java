package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
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
 * <p>Thread-safe for the public methods.
 */
public final class PartitionReader {
  private static final Logger log = LoggerFactory.getLogger(PartitionReader.class);
  private static final long PROGRESS_LOG_MILLIS = 5_000;
  private static final long PARTITION_CHECK_MILLIS = 5_000;
  /** Backlogs shorter than this are not worth starting concurrent fetchers for. */
  static final long MIN_CONCURRENT_FETCH_RECORDS = 1_000;

  private final KafkaConfig config;
  private final int partition;
  private final TopicPartition tp;
  private final Pusher pusher;
  private final Runnable sync;
  private final ReaderMetrics metrics;
  private final LongSupplier clock;
  private final OffsetFile offsetFile;
  private final CommitTracker tracker = new CommitTracker();
  private final CopyOnWriteArrayList<Runnable> caughtUpListeners = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private final Object appliedMonitor = new Object();

  private volatile boolean stopping;
  private volatile boolean caughtUp;
  private volatile @Nullable String blocked;
  private volatile @Nullable String failed;
  private volatile long applied = -1;
  private volatile long endOffsetSeen = -1;
  private volatile @Nullable Admin admin;
  private @Nullable KafkaConsumer<byte[], byte[]> consumer;
  private final @Nullable DeadLetterProducer deadLetter;
  private volatile @Nullable ReaderPipeline pipeline;
  private long lastCommitted = -1;
  private long lastCommitAttempt;
  private long expectedNext = -1;
  private long roundStart;
  private long roundTarget;
  private long lastProgressLog;
  private long appliedAtLastLog;

  public PartitionReader(KafkaConfig config, int partition, Path dataDir, Pusher pusher, Runnable sync,
      ReaderMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.deadLetter = config.deadLetterTopic().isEmpty() ? null
        : new DeadLetterProducer(config.clientProperties(), config.deadLetterTopic(), config.maxRecordSizeBytes(),
            config.writeTimeout());
    this.partition = partition;
    this.tp = new TopicPartition(config.topic(), partition);
    this.pusher = pusher;
    this.sync = sync;
    this.metrics = metrics;
    this.clock = clock;
    this.offsetFile = new OffsetFile(dataDir, config.topic(), partition);
    this.thread = new Thread(this::run, "partition-reader-" + partition);
    metrics.blockedGauge("topic_or_partition_missing", () -> blocked != null ? 1 : 0);
    metrics.blockedGauge("failed", () -> failed != null ? 1 : 0);
    metrics.gauge("weir.ingest.storage.reader.buffered.bytes",
        "Record bytes in the reader pipeline (bounded by max-buffered-bytes).",
        () -> pipeline == null ? 0 : pipeline.bufferedBytes());
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
    if (failed != null) {
      return "partition reader failed: " + failed;
    }
    if (blocked != null) {
      return blocked;
    }
    if (!caughtUp) {
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

  // ---- The reader thread ----------------------------------------------------------------------

  private void run() {
    try {
      KafkaConsumer<byte[], byte[]> c = newConsumer();
      consumer = c;
      waitForPartition(c);
      if (stopping) {
        return;
      }
      c.assign(List.of(tp));
      long start = startOffset(c);
      c.seek(tp, start);
      expectedNext = start;
      applied = start;
      // One CPU stays for fetching and decoding; more shards than that only add context switches
      // and garbage in flight (measured on 2 CPUs: 8 shards slower than the sequential loop,
      // 1 shard beside the decoder 1.2x faster). The flag is a maximum, as in Mimir.
      int shards = Math.min(config.ingestionConcurrency(),
          Math.max(1, Runtime.getRuntime().availableProcessors() - 1));
      if (shards != config.ingestionConcurrency()) {
        log.info("msg=\"ingestion concurrency capped at the number of CPUs less one\" partition={} configured={}"
            + " shards={}", partition, config.ingestionConcurrency(), shards);
      }
      ReaderPipeline p = new ReaderPipeline(shards, config.batchSize(),
          config.maxBufferedBytes(), pusher, deadLetter == null ? null : deadLetter::send,
          metrics, clock, "partition-reader-" + partition);
      pipeline = p;
      roundStart = clock.getAsLong();
      roundTarget = endOffset(c);
      lastProgressLog = roundStart;
      appliedAtLastLog = start;
      if (config.maxLagAtStartup().isZero()) {
        markCaughtUp();
      }
      if (config.fetchConcurrency() > 1 && roundTarget - start >= MIN_CONCURRENT_FETCH_RECORDS) {
        fetchConcurrently(c, p, start, roundTarget);
      }
      while (!stopping) {
        runOnce(c, p);
        Throwable f = p.failure();
        if (f != null) {
          failed = f.toString();
          return;
        }
      }
    } catch (WakeupException | InterruptedException e) {
      // stopping
    } catch (RuntimeException e) {
      failed = e.toString();
      log.error("msg=\"partition reader failed; consumption of this partition stops\" partition={}", partition, e);
    }
  }

  /**
   * The start-up backlog {@code [from, to)} through a {@link ConcurrentFetcher}; then the reader's
   * own consumer continues from wherever this stopped (the end, or a failed window).
   */
  private void fetchConcurrently(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p, long from, long to)
      throws InterruptedException {
    log.info("msg=\"fetching the backlog concurrently\" partition={} fetchers={} from={} to={}", partition,
        config.fetchConcurrency(), from, to);
    int[] n = {0};
    try (ConcurrentFetcher f = new ConcurrentFetcher(tp, from, to, config.fetchConcurrency(), config.maxBufferedBytes(),
        () -> AssignedConsumers.create(config.clientProperties(), config.clientId() + "-fetcher-" + partition + "-"
            + n[0]++, config.consumerGroup(), config.dialTimeout()), metrics)) {
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
        if (p.failure() != null) {
          break;
        }
      }
    }
    c.seek(tp, expectedNext);
    log.info("msg=\"concurrent fetching done; one consumer continues\" partition={} offset={}", partition,
        expectedNext);
  }

  private KafkaConsumer<byte[], byte[]> newConsumer() {
    return AssignedConsumers.create(config.clientProperties(), config.clientId() + "-reader-" + partition,
        config.consumerGroup(), config.dialTimeout());
  }

  private Admin admin() {
    Admin a = admin;
    if (a == null) {
      synchronized (this) {
        a = admin;
        if (a == null) {
          Properties p = config.clientProperties();
          p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
          p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
          a = Admin.create(p);
          admin = a;
        }
      }
    }
    return a;
  }

  /** Waits (not ready, with a metric and a log line) while the topic or partition does not exist. */
  private void waitForPartition(KafkaConsumer<byte[], byte[]> c) throws InterruptedException {
    while (!stopping) {
      String problem;
      try {
        List<PartitionInfo> parts = c.partitionsFor(config.topic(), Duration.ofSeconds(10));
        if (parts == null || parts.isEmpty()) {
          problem = "topic " + config.topic() + " does not exist";
        } else if (parts.stream().noneMatch(i -> i.partition() == partition)) {
          problem = "partition " + partition + " does not exist: topic " + config.topic() + " has " + parts.size()
              + " partitions";
        } else {
          if (blocked != null) {
            log.info("msg=\"partition available, starting to consume\" partition={}", partition);
          }
          blocked = null;
          return;
        }
      } catch (KafkaException e) {
        metrics.fetchErrors.increment();
        problem = null;
        log.warn("msg=\"cannot read the topic's partitions yet, retrying\" topic={} err=\"{}\"", config.topic(),
            e.toString());
      }
      if (problem != null && !problem.equals(blocked)) {
        log.error("msg=\"cannot consume: {}; waiting for it (not ready meanwhile)\" partition={}", problem, partition);
      }
      blocked = problem;
      Thread.sleep(PARTITION_CHECK_MILLIS);
    }
  }

  /**
   * Where to start: the group's committed offset; else the offset file; else the configured
   * start position (last-offset without a commit means the start). With prefer-offset-file the
   * file wins over the group. Positions before the log start (deleted by retention) move to it,
   * counted as missed.
   */
  private long startOffset(KafkaConsumer<byte[], byte[]> c) {
    OffsetAndMetadata committed = c.committed(Set.of(tp)).get(tp);
    OptionalLong file;
    try {
      file = offsetFile.read();
    } catch (IOException e) {
      log.warn("msg=\"ignoring unreadable offset file\" file={} err=\"{}\"", offsetFile.path(), e.getMessage());
      file = OptionalLong.empty();
    }
    long begin = c.beginningOffsets(List.of(tp)).get(tp);
    long end = c.endOffsets(List.of(tp)).get(tp);
    long start;
    String why;
    if (config.preferOffsetFile() && file.isPresent()) {
      start = file.getAsLong();
      why = "offset file (preferred)";
    } else if (committed != null) {
      start = committed.offset();
      why = "committed offset of group " + config.consumerGroup();
      lastCommitted = start;
      metrics.lastCommitted.set(start);
    } else if (file.isPresent()) {
      start = file.getAsLong();
      why = "offset file (the group " + config.consumerGroup() + " has no committed offset)";
    } else {
      switch (config.startPosition()) {
        case "end" -> start = end;
        case "timestamp" -> {
          OffsetAndTimestamp at = c.offsetsForTimes(Map.of(tp, config.startTimestampMillis())).get(tp);
          start = at == null ? end : at.offset();
        }
        default -> start = begin;
      }
      why = "start position " + config.startPosition() + " (no committed offset)";
    }
    if (start < begin) {
      metrics.missedRecords.increment(begin - start);
      log.error("msg=\"records were deleted before they were read (retention?): starting at the log start\""
          + " partition={} wanted={} log_start={} missed={}", partition, start, begin, begin - start);
      start = begin;
    } else if (start > end) {
      log.error("msg=\"start offset beyond the partition end (topic recreated?): starting at the end\" partition={}"
          + " wanted={} end={}", partition, start, end);
      start = end;
    }
    log.info("msg=\"partition reader starting\" partition={} offset={} from=\"{}\" end_offset={}", partition, start,
        why, end);
    return start;
  }

  private long endOffset(KafkaConsumer<byte[], byte[]> c) {
    long e = c.endOffsets(List.of(tp)).get(tp);
    endOffsetSeen = e;
    return e;
  }

  private void runOnce(KafkaConsumer<byte[], byte[]> c, ReaderPipeline p) throws InterruptedException {
    ConsumerRecords<byte[], byte[]> records;
    try {
      records = c.poll(Duration.ofMillis(200));
    } catch (OffsetOutOfRangeException e) {
      long begin = c.beginningOffsets(List.of(tp)).get(tp);
      metrics.missedRecords.increment(Math.max(0, begin - expectedNext));
      log.error("msg=\"fetch position deleted by retention; skipping to the log start\" partition={} position={}"
          + " log_start={}", partition, expectedNext, begin);
      c.seek(tp, begin);
      expectedNext = begin;
      return;
    } catch (WakeupException e) {
      return;
    } catch (KafkaException e) {
      metrics.fetchErrors.increment();
      log.warn("msg=\"fetch failed, retrying (records already fetched are kept)\" partition={} err=\"{}\"", partition,
          e.toString());
      Thread.sleep(500);
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
        if (stopping) {
          return;
        }
      }
    }
    advance(c);
  }

  /** Updates the applied position, lag, commits when due, and the catch-up state. */
  private void advance(KafkaConsumer<byte[], byte[]> c) {
    long done = tracker.committable();
    if (done >= 0 && done != applied) {
      applied = done;
      synchronized (appliedMonitor) {
        appliedMonitor.notifyAll();
      }
    }
    OptionalLong lag = c.currentLag(tp);
    if (lag.isPresent()) {
      long hw = c.position(tp) + lag.getAsLong();
      endOffsetSeen = Math.max(endOffsetSeen, hw);
      metrics.lagRecords.set(Math.max(0, hw - applied));
    } else if (endOffsetSeen >= 0) {
      metrics.lagRecords.set(Math.max(0, endOffsetSeen - applied)); // e.g. while fetchers read ahead
    }
    long now = clock.getAsLong();
    if (now - lastCommitAttempt >= config.commitInterval().toMillis()) {
      lastCommitAttempt = now;
      commit(c, false);
    }
    if (!caughtUp && applied >= roundTarget) {
      if (now - roundStart <= config.maxLagAtStartup().toMillis()) {
        markCaughtUp();
      } else {
        roundStart = now;
        roundTarget = endOffset(c);
        log.info("msg=\"catch-up round done but took longer than the allowed lag; another round\" partition={}"
            + " target_offset={}", partition, roundTarget);
      }
    }
    if (!caughtUp && now - lastProgressLog >= PROGRESS_LOG_MILLIS) {
      double secs = (now - lastProgressLog) / 1000.0;
      double rate = (applied - appliedAtLastLog) / secs;
      long behind = Math.max(0, endOffsetSeen - applied);
      log.info("msg=\"catching up\" partition={} records_behind={} seconds_behind={} records_per_s={} eta_s={}",
          partition, behind, String.format("%.1f", lagSeconds()), String.format("%.0f", rate),
          rate > 0 ? String.format("%.0f", behind / rate) : "unknown");
      lastProgressLog = now;
      appliedAtLastLog = applied;
    }
  }

  private void markCaughtUp() {
    caughtUp = true;
    log.info("msg=\"partition reader caught up\" partition={} offset={}", partition, applied);
    for (Runnable r : caughtUpListeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.error("msg=\"caught-up listener failed\"", e);
      }
    }
  }

  /**
   * Commits the offset after the last fully appended record when it moved: first the WAL is
   * fsynced (so everything before the offset is durable), then the group offset, then the offset
   * file.
   */
  private void commit(KafkaConsumer<byte[], byte[]> c, boolean finalCommit) {
    long next = tracker.committable();
    if (next < 0 || next <= lastCommitted) {
      return;
    }
    if (!c.assignment().equals(Set.of(tp))) {
      throw new IllegalStateException("refusing to commit: assignment " + c.assignment() + " is not " + tp);
    }
    try {
      sync.run();
      c.commitSync(Map.of(tp, new OffsetAndMetadata(next)), Duration.ofSeconds(10));
    } catch (ServerErrorException | KafkaException e) {
      metrics.commitFailures.increment();
      log.warn("msg=\"offset commit failed, retrying at the next interval\" partition={} offset={} err=\"{}\"",
          partition, next, e.toString());
      return;
    }
    lastCommitted = next;
    metrics.lastCommitted.set(next);
    metrics.lastCommitMillis.set(clock.getAsLong());
    try {
      offsetFile.write(next);
    } catch (IOException e) {
      log.warn("msg=\"cannot write the offset file (the group offset is committed)\" file={} err=\"{}\"",
          offsetFile.path(), e.getMessage());
    }
    if (finalCommit) {
      log.info("msg=\"final offset committed\" partition={} offset={}", partition, next);
    }
  }

  // ---- Strong read consistency -----------------------------------------------------------------

  /** The partition's end offset now (what a strong read must wait for). */
  public long currentEndOffset() {
    try {
      return admin().listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS)
          .offset();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ServerErrorException("cannot read the end offset of partition " + partition + ": " + e, e);
    }
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
   * Graceful stop: stop fetching, let the records in flight finish (within the timeout), fsync,
   * final commit, close.
   */
  public void stop(Duration timeout) {
    stopping = true;
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    try {
      thread.join(timeout.toMillis());
      ReaderPipeline p = pipeline;
      // The consumer belongs to the reader thread; touch it here only once that thread is gone.
      if (p != null && c != null && failed == null && !thread.isAlive()) {
        boolean drained = p.drain(timeout.toMillis());
        if (!drained) {
          log.warn("msg=\"records still in flight at shutdown; they will be read again after the restart\""
              + " partition={}", partition);
        }
        advance(c);
        commit(c, true);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.warn("msg=\"final commit failed; the next start re-reads from the last commit\" partition={} err=\"{}\"",
          partition, e.toString());
    } finally {
      ReaderPipeline p = pipeline;
      if (p != null) {
        p.close();
      }
      if (c != null) {
        c.close(Duration.ofSeconds(5));
      }
      if (deadLetter != null) {
        deadLetter.close();
      }
      Admin a = admin;
      if (a != null) {
        a.close(Duration.ofSeconds(5));
      }
    }
  }
}
