package dev.weir.storage.ingest.batch;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.AssignedConsumers;
import dev.weir.storage.ingest.DeadLetterProducer;
import dev.weir.storage.ingest.RecordFormat;
import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.progress.ProgressReporter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes partitions in independent cycles: from a partition's committed offset, read records
 * until the cycle is complete, {@linkplain BatchSink.Batch#flush flush} them to the sink, and only
 * then commit the offset after the last record flushed. Nothing else is remembered between cycles:
 * a crash at any point means the next cycle starts again from the committed offset.
 *
 * <p>A cycle holds the records of one aligned span of record time ({@code consume-interval}, e.g.
 * 12:00–13:00): it starts at the committed offset, whose record fixes the span, and ends before
 * the first record of a later span, at the partition's end offset as of the cycle's start, after
 * {@code maxRecordsPerCycle} records or {@code maxBytesPerCycle} bytes, or when
 * {@code cycleTimeout} passed. A span is consumed only once the wall clock is
 * {@code consume-interval-buffer} past its end (or there are {@code maxRecordsPerCycle} records
 * waiting), so live data is cut into one cycle per span instead of many small ones. A record
 * timestamped in the future does not hold a partition back.
 *
 * <p>Failures: a retryable flush error (and any Kafka error while consuming) abandons the cycle;
 * after a backoff it is redone from the committed offset — head-of-line blocking, nothing later is
 * committed. Every Kafka call (metadata, offsets, fetch, commit) is retried that way, with a
 * backoff doubling up to {@code retryBackoffMax}, for as long as it takes; meanwhile
 * {@link #notReadyReason()} says what is wrong (Kafka unreachable, the topic missing, a permanent
 * dead-letter failure). A fetch that returns nothing for {@link #FETCH_STALL} while records are
 * known to wait probes the broker, so an outage mid-cycle is noticed before the cycle timeout. A
 * non-retryable flush error stops the consumer; {@link #failure()} says why. A commit that fails is
 * retried without redoing the flush. Records that cannot be decoded go to the dead-letter topic when
 * one is set, else are counted and skipped. Offsets that no longer fit the partition (below its log
 * start, above its end) are reset as {@link PartitionOffsets} explains.
 *
 * <p>Memory: a cycle holds at most {@code maxBytesPerCycle} record bytes (one record more only when
 * that single record is larger) and {@code maxRecordsPerCycle} records; when either is reached the
 * cycle ends before the record that would pass it, is flushed and committed, and the next cycle
 * continues from there.
 *
 * <p>Several partitions are served round-robin: after a cycle of one partition the next lagging
 * partition gets the next cycle, so none starves.
 *
 * <p>Thread-safety: one internal thread does all the work; {@link #start}, {@link #close} and the
 * getters may be called from any thread.
 */
public final class BatchingConsumer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BatchingConsumer.class);
  private static final Duration POLL = Duration.ofMillis(200);
  /** Polls that return nothing this long, with records known to wait, mean the broker may be gone. */
  static final Duration FETCH_STALL = Duration.ofSeconds(10);

  private final BatchConfig config;
  private final BatchSink sink;
  private final BatchMetrics metrics;
  private final LongSupplier clock;
  private final PartitionOffsets offsets;
  private final ProgressBoard progress;
  /** Per partition: the committed offset and its record's timestamp, to wait without refetching. */
  private final Map<Integer, long[]> firstRecord = new HashMap<>();
  private volatile boolean stopped;
  private volatile @Nullable String failure;
  private volatile @Nullable String kafkaProblem;
  private volatile @Nullable DeadLetterProducer deadLetter;
  private volatile boolean running;
  private @Nullable Thread thread;
  private int nextIndex;
  private long lastSkipLog;

  public BatchingConsumer(BatchConfig config, BatchSink sink, BatchMetrics metrics, LongSupplier clock) {
    this(config, sink, metrics, clock, ProgressBoard.standard());
  }

  /**
   * As above, reporting each cycle's progress to {@code progress}: records consumed out of those
   * up to the partition's end offset (the cycle may end earlier, at its span's end or a bound).
   */
  public BatchingConsumer(BatchConfig config, BatchSink sink, BatchMetrics metrics, LongSupplier clock,
      ProgressBoard progress) {
    this.progress = progress;
    this.config = config;
    this.sink = sink;
    this.metrics = metrics;
    this.clock = clock;
    this.offsets = new PartitionOffsets(config, metrics, clock);
    for (int p : config.partitions()) {
      metrics.partition(p);
    }
  }

  /** Outcome of one attempt at a cycle. */
  enum Outcome { DONE, NOTHING_TO_DO, RETRY, STOPPED }

  /** Thrown inside a cycle for errors that redoing it can fix. */
  private static final class RetryCycle extends Exception {
    final String kind;

    RetryCycle(String kind, String message, @Nullable Throwable cause) {
      super(message, cause);
      this.kind = kind;
    }
  }

  public synchronized void start() {
    if (thread != null) {
      return;
    }
    Thread t = new Thread(this::run, "batching-consumer-" + config.topic());
    t.setDaemon(false);
    running = true;
    t.start();
    thread = t;
  }

  /** Why the consumer stopped for good (a non-retryable flush error), or null. */
  public @Nullable String failure() {
    return failure;
  }

  /**
   * Why the consumer cannot make progress right now, or null: a {@link #failure()}, Kafka not
   * reachable, the topic or a partition missing, or a permanent dead-letter failure.
   */
  public @Nullable String notReadyReason() {
    String f = failure;
    if (f != null) {
      return f;
    }
    String k = kafkaProblem;
    if (k != null) {
      return k;
    }
    DeadLetterProducer dl = deadLetter;
    String d = dl == null ? null : dl.permanentFailure();
    return d == null ? null : "dead-letter topic: " + d;
  }

  public boolean running() {
    return running;
  }

  /**
   * Stops after the current step: a cycle still consuming is abandoned (redone after restart);
   * one already flushing completes, and its commit is attempted once more.
   */
  @Override
  public void close() throws InterruptedException {
    stopped = true;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t != null && t != Thread.currentThread()) {
      t.join(Duration.ofMinutes(2).toMillis());
    }
  }

  private void run() {
    Properties props = config.clientProperties();
    // A missing topic must stay missing (and be reported), not be created empty by a metadata request.
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    try (KafkaConsumer<byte[], byte[]> c = AssignedConsumers.create(props, config.clientId()
            + "-batch-consumer", config.consumerGroup(), Duration.ofSeconds(10), config.partitionFetchBytes());
        DeadLetterProducer dl = config.deadLetterTopic().isEmpty() ? null : new DeadLetterProducer(config.clientProperties(),
            config.deadLetterTopic(), config.maxRecordSizeBytes(), Duration.ofSeconds(10))) {
      deadLetter = dl;
      log.info("msg=\"batching consumer started\" topic={} partitions={} group={} interval={}s buffer={}s",
          config.topic(), config.partitions(), config.consumerGroup(), config.consumeInterval().toSeconds(),
          config.consumeIntervalBuffer().toSeconds());
      Duration backoff = config.retryBackoffMin();
      while (!stopped) {
        boolean worked = false;
        List<Integer> parts = config.partitions();
        for (int i = 0; i < parts.size() && !stopped; i++) {
          int index = (nextIndex + i) % parts.size();
          Outcome o = attempt(c, dl, parts.get(index));
          if (o == Outcome.DONE) {
            nextIndex = (index + 1) % parts.size();
            worked = true;
            backoff = config.retryBackoffMin();
            break;
          }
          if (o == Outcome.RETRY) {
            // Head-of-line: redo this partition's cycle after the backoff, before any other.
            sleep(backoff);
            backoff = backoff.multipliedBy(2).compareTo(config.retryBackoffMax()) > 0 ? config.retryBackoffMax()
                : backoff.multipliedBy(2);
            nextIndex = index;
            worked = true;
            break;
          }
          if (o == Outcome.STOPPED) {
            return;
          }
        }
        if (!worked) {
          sleep(config.idlePollInterval());
        }
      }
    } catch (RuntimeException e) {
      failure = "batching consumer failed: " + e;
      log.error("msg=\"batching consumer failed; it stops\"", e);
    } finally {
      running = false;
      log.info("msg=\"batching consumer stopped\" topic={}", config.topic());
    }
  }

  private Outcome attempt(KafkaConsumer<byte[], byte[]> c, @Nullable DeadLetterProducer dl, int partition) {
    try {
      return cycle(c, dl, partition);
    } catch (RetryCycle e) {
      metrics.flushFailure(e.kind, true);
      if (e.kind.equals("kafka")) {
        kafkaUnavailable("Kafka not reachable: " + e.getMessage());
      }
      log.warn("msg=\"cycle failed; it will be redone from the committed offset\" partition={} kind={} err=\"{}\"",
          partition, e.kind, String.valueOf(e.getMessage()).replace('"', '\''));
      return Outcome.RETRY;
    } catch (SinkException e) {
      metrics.flushFailure(e.kind(), e.retryable());
      if (e.retryable()) {
        log.warn("msg=\"flush failed; the cycle will be redone from the committed offset\" partition={} kind={}"
            + " err=\"{}\"", partition, e.kind(), String.valueOf(e.getMessage()).replace('"', '\''));
        return Outcome.RETRY;
      }
      failure = "partition " + partition + ": flush failed and cannot be retried (" + e.kind() + "): "
          + e.getMessage();
      log.error("msg=\"flush failed with a non-retryable error; the consumer stops, offsets stay where they are\""
          + " partition={} kind={}", partition, e.kind(), e);
      stopped = true;
      return Outcome.STOPPED;
    }
  }

  private Outcome cycle(KafkaConsumer<byte[], byte[]> c, @Nullable DeadLetterProducer dl, int partition)
      throws RetryCycle, SinkException {
    long started = clock.getAsLong();
    TopicPartition tp = new TopicPartition(config.topic(), partition);
    BatchMetrics.PartitionGauges g = metrics.partition(partition);
    PartitionOffsets.Range range = resolve(c, tp);
    long committed = range.committed();
    long end = range.end();
    g.committed.set(committed);
    g.lagRecords.set(Math.max(0, end - committed));
    if (committed >= end) {
      g.lagMillis.set(0);
      return Outcome.NOTHING_TO_DO;
    }

    ArrayDeque<ConsumerRecord<byte[], byte[]>> buffered = new ArrayDeque<>();
    long firstTs;
    long[] cached = firstRecord.get(partition);
    c.assign(Set.of(tp));
    if (cached != null && cached[0] == committed) {
      firstTs = cached[1];
    } else {
      c.seek(tp, committed);
      ConsumerRecord<byte[], byte[]> first = pollFirst(c, tp, buffered);
      if (first == null) {
        return stopped ? Outcome.STOPPED : Outcome.NOTHING_TO_DO;
      }
      firstTs = first.timestamp();
      firstRecord.put(partition, new long[] {committed, firstTs});
    }
    long now = clock.getAsLong();
    g.lagMillis.set(Math.max(0, now - firstTs));
    long interval = config.consumeInterval().toMillis();
    long spanEnd = Math.floorDiv(firstTs, interval) * interval + interval;
    boolean future = firstTs > now + config.consumeIntervalBuffer().toMillis();
    boolean spanComplete = now >= spanEnd + config.consumeIntervalBuffer().toMillis() || future;
    boolean enoughRecords = config.maxRecordsPerCycle() > 0 && end - committed >= config.maxRecordsPerCycle();
    if (!spanComplete && !enoughRecords) {
      return Outcome.NOTHING_TO_DO;
    }
    if (future) {
      log.warn("msg=\"record timestamp is in the future; consuming to the end offset\" partition={} offset={}"
          + " timestamp={}", partition, committed, firstTs);
      spanEnd = Long.MAX_VALUE;
    }
    if (buffered.isEmpty()) {
      c.seek(tp, committed);
    }

    Window w = new Window(tp, end, spanEnd, started + config.cycleTimeout().toMillis());
    long bound = config.maxRecordsPerCycle() > 0 ? Math.min(end, committed + config.maxRecordsPerCycle()) : end;
    ProgressReporter reporter = progress.begin(log, "block-builder cycle", "partition=" + partition, "records",
        bound - committed);
    Progress p = new Progress(committed, reporter);
    try (BatchSink.Batch batch = sink.begin(partition, committed, firstTs)) {
      if (!consume(c, dl, w, batch, buffered, p)) {
        return Outcome.STOPPED;
      }
      reporter.finish();
      if (p.records == 0) {
        return Outcome.NOTHING_TO_DO; // timed out before the first record: nothing to flush
      }
      log.info("msg=\"flushing cycle\" partition={} from={} to={} records={} bytes={} ended_by={}", partition,
          committed, p.next, p.records, p.bytes, p.endedBy);
      batch.flush(p.next);
    } finally {
      metrics.bufferedBytes.set(0);
    }
    long next = p.next;
    if (!commit(c, tp, next)) {
      return Outcome.STOPPED;
    }
    firstRecord.remove(partition);
    g.committed.set(next);
    g.lastCommitMillis.set(clock.getAsLong());
    g.lagRecords.set(Math.max(0, end - next));
    if (next >= end) {
      g.lagMillis.set(0);
    }
    Duration took = Duration.ofMillis(clock.getAsLong() - started);
    metrics.cycle(partition, p.records, p.bytes, took);
    log.info("msg=\"cycle committed\" partition={} offset={} records={} took={}ms lag_records={}", partition, next,
        p.records, took.toMillis(), Math.max(0, end - next));
    return Outcome.DONE;
  }

  /** The partition's offsets, with the Kafka state (reachable, topic there) they revealed. */
  private PartitionOffsets.Range resolve(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) throws RetryCycle {
    int partition = tp.partition();
    PartitionOffsets.Range range;
    try {
      range = offsets.resolve(c, tp);
      if (range.reset()) {
        firstRecord.remove(partition); // it described a record of the partition before the reset
      }
    } catch (PartitionOffsets.TopicMissing e) {
      firstRecord.remove(partition);
      metrics.topicMissing.set(1);
      kafkaProblem = e.getMessage();
      throw new RetryCycle("topic_missing", e.getMessage(), e);
    } catch (KafkaException e) {
      throw new RetryCycle("kafka", "cannot read offsets of partition " + partition + ": " + e, e);
    }
    metrics.topicMissing.set(0);
    kafkaAvailable();
    return range;
  }

  /** The limits of one cycle: the partition's end offset, the span's end, the cycle's deadline. */
  private record Window(TopicPartition tp, long end, long spanEnd, long deadline) {}

  /** What a cycle consumed so far; {@code endedBy} stays null while it goes on. */
  private static final class Progress {
    final ProgressReporter reporter;
    final long committed;
    long records;
    long bytes;
    long next;
    @Nullable String endedBy;

    Progress(long committed, ProgressReporter reporter) {
      this.committed = committed;
      this.reporter = reporter;
      next = committed;
    }
  }

  /**
   * Adds records to {@code batch} until the cycle ends (the end offset, the span, a record or byte
   * bound, the deadline); {@code p} says how far it got and why it ended.
   *
   * @return false when the consumer was stopped meanwhile
   */
  private boolean consume(KafkaConsumer<byte[], byte[]> c, @Nullable DeadLetterProducer dl, Window w,
      BatchSink.Batch batch, ArrayDeque<ConsumerRecord<byte[], byte[]>> buffered, Progress p) throws RetryCycle {
    long lastFetched = clock.getAsLong();
    while (p.endedBy == null) {
      if (buffered.isEmpty()) {
        if (stopped) {
          return false;
        }
        if (clock.getAsLong() >= w.deadline()) {
          p.endedBy = "timeout";
        } else if (fetch(c, w.tp(), buffered)) {
          lastFetched = clock.getAsLong();
        } else if (clock.getAsLong() - lastFetched >= FETCH_STALL.toMillis()) {
          probe(c, w.tp());
          lastFetched = clock.getAsLong();
        }
        continue;
      }
      ConsumerRecord<byte[], byte[]> r = buffered.peek();
      long size = r.serializedKeySize() + Math.max(0, r.serializedValueSize());
      if (config.maxBytesPerCycle() > 0 && p.records > 0 && p.bytes + size > config.maxBytesPerCycle()) {
        p.endedBy = "max_bytes"; // this record starts the next cycle
        break;
      }
      buffered.poll();
      if (r.offset() >= w.end()) {
        p.endedBy = "end_offset";
        break;
      }
      if (r.timestamp() >= w.spanEnd()) {
        p.endedBy = "span";
        metrics.partition(r.partition()).lagMillis.set(Math.max(0, clock.getAsLong() - r.timestamp()));
        break;
      }
      p.next = r.offset() + 1;
      p.records++;
      p.bytes += size;
      p.reporter.update(p.next - p.committed);
      metrics.bufferedBytes.set(p.bytes);
      try {
        RecordFormat.Decoded d = RecordFormat.decode(r.key(), r.value(), r.headers());
        batch.add(d.tenant(), d.request(), r.offset(), r.timestamp());
      } catch (ClientErrorException e) {
        skip(dl, r, e);
      }
      if (p.next >= w.end()) {
        p.endedBy = "end_offset";
      } else if (config.maxRecordsPerCycle() > 0 && p.records >= config.maxRecordsPerCycle()) {
        p.endedBy = "max_records";
      }
    }
    return true;
  }

  private @Nullable ConsumerRecord<byte[], byte[]> pollFirst(KafkaConsumer<byte[], byte[]> c, TopicPartition tp,
      ArrayDeque<ConsumerRecord<byte[], byte[]>> buffered) throws RetryCycle {
    long deadline = clock.getAsLong() + config.cycleTimeout().toMillis();
    long lastFetched = clock.getAsLong();
    while (buffered.isEmpty() && !stopped && clock.getAsLong() < deadline) {
      if (!fetch(c, tp, buffered) && clock.getAsLong() - lastFetched >= FETCH_STALL.toMillis()) {
        probe(c, tp);
        lastFetched = clock.getAsLong();
      }
    }
    return buffered.peek();
  }

  private void skip(@Nullable DeadLetterProducer dl, ConsumerRecord<byte[], byte[]> r, ClientErrorException e)
      throws RetryCycle {
    metrics.skipped(r.partition(), e.reason());
    if (dl != null) {
      try {
        dl.send(r, e.getMessage());
      } catch (ServerErrorException se) {
        throw new RetryCycle("dead_letter", se.getMessage(), se);
      }
    }
    long now = clock.getAsLong();
    if (now - lastSkipLog >= 1000) {
      lastSkipLog = now;
      log.warn("msg=\"record skipped\" partition={} offset={} reason={} err=\"{}\" dead_letter_topic={}",
          r.partition(), r.offset(), e.reason(), e.getMessage().replace('"', '\''),
          dl == null ? "(none)" : dl.topic());
    }
  }

  /** One poll; true when it returned records. */
  private boolean fetch(KafkaConsumer<byte[], byte[]> c, TopicPartition tp,
      ArrayDeque<ConsumerRecord<byte[], byte[]>> buffered) throws RetryCycle {
    try {
      int before = buffered.size();
      c.poll(POLL).forEach(buffered::add);
      return buffered.size() > before;
    } catch (KafkaException e) {
      throw new RetryCycle("kafka", "fetch from partition " + tp.partition() + " failed: " + e, e);
    }
  }

  /** Asks the broker for the end offset: polls return nothing, yet records wait; is it there? */
  private void probe(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) throws RetryCycle {
    try {
      c.endOffsets(Set.of(tp), FETCH_STALL);
      kafkaAvailable();
    } catch (KafkaException e) {
      throw new RetryCycle("kafka", "no records fetched from partition " + tp.partition() + " for "
          + FETCH_STALL.toSeconds() + "s and the broker does not answer: " + e, e);
    }
  }

  private void kafkaUnavailable(String reason) {
    metrics.kafkaUnavailable.set(1);
    kafkaProblem = reason;
  }

  private void kafkaAvailable() {
    metrics.kafkaUnavailable.set(0);
    kafkaProblem = null;
  }

  /** Commits, retrying until it succeeds or the consumer stops (then the cycle is redone later). */
  private boolean commit(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long next) {
    Duration backoff = config.retryBackoffMin();
    while (true) {
      try {
        c.commitSync(Map.of(tp, new OffsetAndMetadata(next)), Duration.ofSeconds(10));
        kafkaAvailable();
        return true;
      } catch (KafkaException e) {
        metrics.commitFailure();
        kafkaUnavailable("offset commit failing: " + e);
        log.warn("msg=\"offset commit failed; retrying\" partition={} offset={} err=\"{}\"", tp.partition(), next,
            e.toString().replace('"', '\''));
        if (stopped) {
          log.warn("msg=\"stopping before the commit succeeded; the flushed cycle will be redone (idempotently)\""
              + " partition={}", tp.partition());
          return false;
        }
        sleep(backoff);
        backoff = backoff.multipliedBy(2).compareTo(config.retryBackoffMax()) > 0 ? config.retryBackoffMax()
            : backoff.multipliedBy(2);
      }
    }
  }

  private void sleep(Duration d) {
    long until = System.nanoTime() + d.toNanos();
    while (!stopped && System.nanoTime() < until) {
      try {
        Thread.sleep(Math.min(100, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
