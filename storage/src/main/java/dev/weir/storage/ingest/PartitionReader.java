package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.progress.ProgressBoard;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
 * <p>The parts: {@link StartPosition} (where to begin), {@link ReaderSession} (the fetch loop of
 * one consumer and one {@link ReaderPipeline}), {@link CommitTracker} and {@link OffsetCommitter}
 * (what may be committed, and committing it), {@link CatchUp} (when the reader is ready), {@link
 * TopicWatch} (a deleted or re-created topic), {@link KafkaRetry} (every Kafka call survives a
 * broker outage) and {@link ReaderState} (what the outside sees). When anything in a session
 * fails unexpectedly the reader is not ready with the reason, closes the session and starts a
 * new one at its last applied offset, with backoff.
 *
 * <p>Thread-safe for the public methods.
 */
public final class PartitionReader {
  private static final Logger log = LoggerFactory.getLogger(PartitionReader.class);
  private static final long PARTITION_CHECK_MILLIS = 5_000;
  private static final long FIRST_RESTART_BACKOFF_MILLIS = 1_000;
  private static final long MAX_RESTART_BACKOFF_MILLIS = 30_000;
  /** Backlogs shorter than this are not worth starting concurrent fetchers for. */
  static final long MIN_CONCURRENT_FETCH_RECORDS = 1_000;

  private final KafkaConfig config;
  private final int partition;
  private final Pusher pusher;
  private final LongSupplier clock;
  private final ReaderState state;
  private final ReaderSession.Parts parts;
  private final CopyOnWriteArrayList<Runnable> caughtUpListeners = new CopyOnWriteArrayList<>();
  private final CopyOnWriteArrayList<Runnable> partitionFoundListeners = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private final @Nullable DeadLetterProducer deadLetter;

  private volatile boolean stopping;
  private volatile boolean autoIncreasePartitions;
  private volatile boolean partitionSeen;
  private volatile long drainMillis = 30_000;
  private volatile long rewindTo = -1;
  private volatile @Nullable KafkaConsumer<byte[], ByteBuffer> consumer;
  private volatile @Nullable ReaderPipeline pipeline;
  private volatile @Nullable ReaderSession session;

  public PartitionReader(KafkaConfig config, int partition, Path dataDir, Pusher pusher, Runnable sync,
      ReaderMetrics metrics, LongSupplier clock) {
    this(config, partition, dataDir, pusher, sync, metrics, clock, ProgressBoard.standard());
  }

  /** As above, reporting the start-up catch-up's progress to {@code progress}. */
  public PartitionReader(KafkaConfig config, int partition, Path dataDir, Pusher pusher, Runnable sync,
      ReaderMetrics metrics, LongSupplier clock, ProgressBoard progress) {
    this.config = config;
    this.deadLetter = config.deadLetterTopic().isEmpty() ? null
        : new DeadLetterProducer(config.clientProperties(), config.deadLetterTopic(), config.maxRecordSizeBytes(),
            config.writeTimeout());
    this.partition = partition;
    this.pusher = pusher;
    this.clock = clock;
    this.state = new ReaderState(partition);
    TopicPartition tp = new TopicPartition(config.topic(), partition);
    OffsetFile offsetFile = new OffsetFile(dataDir, config.topic(), partition);
    this.parts = new ReaderSession.Parts(config, tp, metrics, state,
        new KafkaRetry(partition, metrics, () -> stopping, state::kafkaProblem),
        new OffsetCommitter(tp, sync, offsetFile, metrics, clock, config.commitInterval()),
        new CatchUp(partition, config.maxLagAtStartup(), clock, progress), new TopicWatch(config, tp, clock),
        new StartPosition(config, tp, offsetFile, metrics), clock);
    this.thread = new Thread(this::run, "partition-reader-" + partition);
    metrics.blockedGauge("topic_or_partition_missing", () -> state.blocked() != null ? 1 : 0);
    metrics.blockedGauge("failed", () -> state.failed() != null ? 1 : 0);
    metrics.blockedGauge("kafka_unavailable", () -> state.kafkaProblem() != null ? 1 : 0);
    metrics.gauge("weir.ingest.storage.reader.buffered.bytes",
        "Record bytes in the reader pipeline (bounded by max-buffered-bytes).", () -> {
          ReaderPipeline p = pipeline;
          return p == null ? 0 : p.bufferedBytes();
        });
    metrics.gauge("weir.ingest.storage.reader.fetcher.buffered.bytes",
        "Record bytes held by concurrent fetchers and not yet in the pipeline (with the pipeline's, bounded by"
            + " max-buffered-bytes).", () -> {
          ReaderSession s = session;
          return s == null ? 0 : s.fetcherBytes();
        });
    metrics.gauge("weir.ingest.storage.reader.inflight.records", "Records in the reader pipeline.", () -> {
      ReaderPipeline p = pipeline;
      return p == null ? 0 : p.inFlight();
    });
    metrics.gauge("weir.ingest.storage.reader.lag.seconds",
        "Seconds between now and the timestamp of the last record appended, while records remain to read; 0"
            + " when caught up to the end of the partition.", () -> {
          ReaderSession s = session;
          return s == null ? -1 : s.lagSeconds(clock.getAsLong());
        });
  }

  public int partition() {
    return partition;
  }

  /**
   * Whether the reader raises the topic's partition count (never lowers it) when its partition
   * does not exist yet (scale-out); otherwise it waits, not ready, naming the partition and the
   * topic's count. Call before {@link #start()}.
   */
  public void autoIncreasePartitions(boolean enabled) {
    this.autoIncreasePartitions = enabled;
  }

  /** Whether the reader has seen its partition in the topic (it may be consumed). */
  public boolean partitionExists() {
    return partitionSeen;
  }

  /** Called on the reader thread when it first sees its partition in the topic. */
  public void onPartitionFound(Runnable r) {
    partitionFoundListeners.add(r);
  }

  /** Called once, on the reader thread, when the start-up catch-up is done. */
  public void onCaughtUp(Runnable r) {
    caughtUpListeners.add(r);
  }

  /**
   * Makes the first start begin at {@code offset} when that is below the committed offset: the
   * WAL repair dropped data that came from it, and Kafka still has it. Call before {@link #start()}.
   */
  public void rewindAtStart(long offset) {
    rewindTo = offset;
  }

  public void start() {
    thread.setDaemon(true);
    thread.start();
  }

  public boolean caughtUp() {
    return state.caughtUp();
  }

  /** The offset after the last record fully appended (Kafka's next-offset convention), or -1. */
  public long appliedOffset() {
    return state.applied();
  }

  /** How far the partition is consumed now; see {@link PartitionFreshness}. */
  public PartitionFreshness freshness() {
    PartitionFreshness f = state.freshness();
    return f.ready() && notReadyReason() != null
        ? new PartitionFreshness(f.partition(), f.consumedOffset(), f.endOffset(), f.recordsBehind(),
            f.consumedUpToMillis(), false)
        : f;
  }

  /** Why the reader is not (yet) serving consistent data, or null. */
  public @Nullable String notReadyReason() {
    String r = state.notReadyReason();
    if (r != null) {
      return r;
    }
    String dl = deadLetter == null ? null : deadLetter.permanentFailure();
    return dl == null ? null
        : "dead-letter topic " + config.deadLetterTopic() + " refuses records (the partition is held): " + dl;
  }

  // ---- The reader thread ----------------------------------------------------------------------

  private void run() {
    long backoff = FIRST_RESTART_BACKOFF_MILLIS;
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
        parts.retry().sleep(backoff);
      } catch (WakeupException | InterruptedException e) {
        return;
      }
      backoff = Math.min(MAX_RESTART_BACKOFF_MILLIS, backoff * 2);
    }
  }

  private void recordFailure(Throwable e) {
    state.failed(e);
    parts.metrics().pipelineRestarts.increment();
    log.error("msg=\"partition reader failed; not ready, restarting from the last applied offset\" partition={}"
        + " offset={}", partition, state.applied(), e);
  }

  /** One session: a consumer and a pipeline, from the start (or resume) position until stop or failure. */
  private void runSession() throws InterruptedException {
    KafkaConsumer<byte[], ByteBuffer> c = AssignedConsumers.createReader(config.clientProperties(),
        config.clientId() + "-reader-" + partition, config.consumerGroup(), config.dialTimeout(),
        AssignedConsumers.partitionFetchBytes(config.maxBufferedBytes(),
            AssignedConsumers.compressionAllowance(config)));
    consumer = c;
    ReaderPipeline p = null;
    try {
      waitForPartition(c);
      c.assign(List.of(parts.tp()));
      boolean resuming = state.failed() != null;
      StartPosition.Start start = parts.startPosition().resolve(c, parts.retry(), resuming ? state.applied() : -1);
      if (!resuming && start.committed() >= 0) {
        parts.committer().knownCommitted(start.committed());
      }
      long from = start.offset();
      long rewind = rewindTo;
      if (rewind >= 0) {
        rewindTo = -1;
        if (rewind < from) {
          log.warn("msg=\"re-consuming records whose WAL data was dropped by a repair\" partition={} from={}"
              + " committed={} records={}", partition, rewind, from, from - rewind);
          from = parts.startPosition().clampToPartition(c, parts.retry(), rewind);
        }
      }
      p = newPipeline();
      pipeline = p;
      ReaderSession s = new ReaderSession(parts, c, p, () -> stopping, this::markCaughtUp);
      session = s;
      s.run(from, drainMillis);
    } finally {
      session = null;
      pipeline = null;
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
        deadLetter == null ? null : deadLetter::send, parts.metrics(), clock, "partition-reader-" + partition);
  }

  /** Waits (not ready, with a metric and a log line) while the topic or partition does not exist. */
  private void waitForPartition(KafkaConsumer<byte[], ByteBuffer> c) throws InterruptedException {
    while (!stopping) {
      String problem = null;
      List<PartitionInfo> infos = parts.retry().call("reading the topic's partitions",
          () -> c.partitionsFor(config.topic(), Duration.ofSeconds(10)));
      if (infos == null || infos.isEmpty()) {
        problem = "topic " + config.topic() + " does not exist";
      } else if (infos.stream().noneMatch(i -> i.partition() == partition)) {
        problem = "partition " + partition + " does not exist: topic " + config.topic() + " has " + infos.size()
            + " partitions";
        if (!autoIncreasePartitions) {
          problem += " (raise it by hand, or start ingesters with"
              + " --ingest-storage.kafka.auto-increase-partitions-enabled)";
        } else {
          try {
            PartitionCount.raiseTo(config, partition + 1);
            continue; // check again at once: the new partition should be there now
          } catch (ServerErrorException e) {
            problem += "; raising it to " + (partition + 1) + " failed: " + e.getMessage();
          }
        }
      }
      if (problem == null) {
        if (state.blocked() != null) {
          log.info("msg=\"partition available, starting to consume\" partition={}", partition);
        }
        state.blocked(null);
        if (!partitionSeen) {
          partitionSeen = true;
          runListeners(partitionFoundListeners);
        }
        return;
      }
      if (!problem.equals(state.blocked())) {
        log.error("msg=\"cannot consume: {}; waiting for it (not ready meanwhile)\" partition={}", problem, partition);
      }
      state.blocked(problem);
      parts.retry().sleep(PARTITION_CHECK_MILLIS);
    }
  }

  private void markCaughtUp() {
    state.caughtUp(true);
    log.info("msg=\"partition reader caught up\" partition={} offset={}", partition, state.applied());
    runListeners(caughtUpListeners);
  }

  private static void runListeners(List<Runnable> listeners) {
    for (Runnable r : listeners) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.error("msg=\"reader listener failed\"", e);
      }
    }
  }

  // ---- Strong read consistency -----------------------------------------------------------------

  /** The partition's end offset now (what a strong read must wait for). */
  public long currentEndOffset() {
    return parts.topicWatch().currentEndOffset();
  }

  /**
   * Waits until every record before {@code endOffset} is appended.
   *
   * @throws dev.weir.storage.errors.ServerErrorException when that does not happen within the timeout
   */
  public void awaitApplied(long endOffset, Duration timeout) {
    state.awaitApplied(endOffset, timeout);
  }

  // ---- Shutdown ------------------------------------------------------------------------------

  /**
   * Graceful stop: the reader thread stops fetching, lets the records in flight finish (within the
   * timeout), fsyncs, commits a last time and closes its consumer; this waits for that.
   */
  public void stop(Duration timeout) {
    drainMillis = timeout.toMillis();
    stopping = true;
    KafkaConsumer<byte[], ByteBuffer> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    try {
      // After the drain come the final commit (up to 10 s) and closing the consumer (up to 5 s).
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
      parts.topicWatch().close();
    }
  }
}
