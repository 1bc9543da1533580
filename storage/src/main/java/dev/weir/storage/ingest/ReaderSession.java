package dev.weir.storage.ingest;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer and one pipeline of a {@link PartitionReader}, from a start position until a stop
 * request or a failure: the fetch loop (poll → gap check → pipeline → commit tracking), commits
 * when due, the catch-up state, a fetch position that left the partition, and a deleted or
 * re-created topic. Anything unexpected is thrown to the reader, which closes the session and
 * starts a new one.
 *
 * <p>Used by the reader thread only, except {@link #lagSeconds()} and {@link #fetcherBytes()}.
 */
final class ReaderSession {
  private static final Logger log = LoggerFactory.getLogger(ReaderSession.class);

  /** The reader's parts a session works with (all owned by the reader). */
  record Parts(KafkaConfig config, TopicPartition tp, ReaderMetrics metrics, ReaderState state, KafkaRetry retry,
      OffsetCommitter committer, CatchUp catchUp, TopicWatch topicWatch, StartPosition startPosition,
      LongSupplier clock) {}

  private final Parts parts;
  private final KafkaConsumer<byte[], ByteBuffer> consumer;
  private final ReaderPipeline pipeline;
  private final BooleanSupplier stopping;
  private final Runnable onCaughtUp;
  private final int partition;
  private final ReaderMetrics metrics;
  private final ReaderState state;
  private CommitTracker tracker = new CommitTracker();
  private long expectedNext = -1;
  private volatile @Nullable ConcurrentFetcher fetcher;

  ReaderSession(Parts parts, KafkaConsumer<byte[], ByteBuffer> consumer, ReaderPipeline pipeline,
      BooleanSupplier stopping, Runnable onCaughtUp) {
    this.parts = parts;
    this.consumer = consumer;
    this.pipeline = pipeline;
    this.stopping = stopping;
    this.onCaughtUp = onCaughtUp;
    this.partition = parts.tp().partition();
    this.metrics = parts.metrics();
    this.state = parts.state();
  }

  /** Seconds since the newest record appended was written, while records remain; 0 when caught up. */
  double lagSeconds(long now) {
    long lag = metrics.lagRecords.get();
    long ts = tracker.lastDoneTimestamp();
    if (lag <= 0 || ts < 0) {
      return lag == 0 ? 0 : -1;
    }
    return Math.max(0, now - ts) / 1000.0;
  }

  double fetcherBytes() {
    ConcurrentFetcher f = fetcher;
    return f == null ? 0 : f.heldBytes();
  }

  /** Consumes from {@code start} until a stop request (then drains and commits) or a failure (thrown). */
  void run(long start, long drainMillis) throws InterruptedException {
    moveTo(start);
    if (!state.caughtUp()) {
      parts.catchUp().startRound(endOffset(), state.applied());
      if (parts.catchUp().disabled()) {
        onCaughtUp.run();
      }
      KafkaConfig config = parts.config();
      if (config.fetchConcurrency() > 1
          && parts.catchUp().target() - start >= PartitionReader.MIN_CONCURRENT_FETCH_RECORDS) {
        fetchConcurrently(start, parts.catchUp().target());
      }
    }
    while (!stopping.getAsBoolean()) {
      runOnce();
      checkPipeline();
      watchTopic();
    }
    finishOnStop(drainMillis);
  }

  /** Positions the consumer and the commit tracking at {@code offset}. */
  private void moveTo(long offset) {
    if (offset < state.applied()) {
      state.movedBack();
    }
    consumer.seek(parts.tp(), offset);
    expectedNext = offset;
    tracker = new CommitTracker();
    tracker.resetTo(offset);
    state.applied(offset);
  }

  /** A failed pipeline fails the session, which the reader then restarts. */
  private void checkPipeline() {
    Throwable f = pipeline.failure();
    if (f != null) {
      throw new IllegalStateException("reader pipeline failed: " + f, f);
    }
  }

  /** Stop requested: let the records in flight finish (within the stop timeout), then the final commit. */
  private void finishOnStop(long drainMillis) throws InterruptedException {
    if (!pipeline.drain(drainMillis)) {
      log.warn("msg=\"records still in flight at shutdown; they will be read again after the restart\""
          + " partition={}", partition);
    }
    if (pipeline.failure() == null) {
      updateApplied();
      parts.committer().commitFinal(consumer, tracker.committable());
    }
  }

  /**
   * The start-up backlog {@code [from, to)} through a {@link ConcurrentFetcher}; then the reader's
   * own consumer continues from wherever this stopped (the end, or a failed window). The fetchers
   * get half of {@code max-buffered-bytes} and the pipeline the other half meanwhile.
   */
  private void fetchConcurrently(long from, long to) throws InterruptedException {
    KafkaConfig config = parts.config();
    log.info("msg=\"fetching the backlog concurrently\" partition={} fetchers={} from={} to={}", partition,
        config.fetchConcurrency(), from, to);
    long budget = config.maxBufferedBytes() / 2;
    pipeline.limitBufferedBytes(budget);
    int[] n = {0};
    int allowance = AssignedConsumers.compressionAllowance(config);
    try (ConcurrentFetcher f = new ConcurrentFetcher(parts.tp(), from, to, config.fetchConcurrency(), budget,
        fetchBytes -> AssignedConsumers.createReader(config.clientProperties(), config.clientId() + "-fetcher-" + partition
            + "-" + n[0]++, config.consumerGroup(), config.dialTimeout(),
            AssignedConsumers.fetcherFetchBytes(fetchBytes, allowance)),
        metrics)) {
      fetcher = f;
      while (!stopping.getAsBoolean() && !f.finished()) {
        List<ConsumerRecord<byte[], ByteBuffer>> records;
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
          handle(records);
        }
        advance();
        checkPipeline();
      }
    } finally {
      fetcher = null;
      pipeline.limitBufferedBytes(config.maxBufferedBytes());
    }
    consumer.seek(parts.tp(), expectedNext);
    log.info("msg=\"concurrent fetching done; one consumer continues\" partition={} offset={}", partition,
        expectedNext);
  }

  private long endOffset() throws InterruptedException {
    TopicPartition tp = parts.tp();
    long sentAt = parts.clock().getAsLong();
    long e = parts.retry().call("reading the end offset", () -> consumer.endOffsets(List.of(tp)).get(tp));
    state.endOffsetRead(e, sentAt);
    return e;
  }

  private long logStart() throws InterruptedException {
    TopicPartition tp = parts.tp();
    return parts.retry().call("reading the log start offset", () -> consumer.beginningOffsets(List.of(tp)).get(tp));
  }

  private void runOnce() throws InterruptedException {
    ConsumerRecords<byte[], ByteBuffer> records;
    try {
      records = consumer.poll(Duration.ofMillis(200));
    } catch (OffsetOutOfRangeException e) {
      resetPosition();
      return;
    } catch (WakeupException e) {
      return;
    } catch (KafkaException e) {
      metrics.fetchErrors.increment();
      log.warn("msg=\"fetch failed, retrying (records already fetched are kept)\" partition={} err=\"{}\"", partition,
          e.toString());
      parts.retry().sleep(500);
      return;
    }
    handle(records.records(parts.tp()));
  }

  /** Hands fetched records (in offset order) to the pipeline: gap check, metrics, commit tracking. */
  private void handle(Iterable<ConsumerRecord<byte[], ByteBuffer>> records) throws InterruptedException {
    for (ConsumerRecord<byte[], ByteBuffer> fetched : records) {
      ConsumerRecord<byte[], ByteBuffer> r = AssignedConsumers.unpinned(fetched);
      if (r.offset() > expectedNext) {
        long gap = r.offset() - expectedNext;
        metrics.missedRecords.increment(gap);
        log.error("msg=\"gap in the partition's offsets: records missed\" partition={} expected={} got={} missed={}",
            partition, expectedNext, r.offset(), gap);
      }
      expectedNext = r.offset() + 1;
      int size = (r.value() == null ? 0 : r.value().remaining()) + (r.key() == null ? 0 : r.key().length);
      metrics.recordsConsumed.increment();
      metrics.bytesConsumed.increment(size);
      CommitTracker.Entry e = new CommitTracker.Entry(r.offset(), r.timestamp(), size);
      tracker.add(e);
      while (!pipeline.submit(r, e, 100)) {
        // The pipeline is full: keep committing what is done meanwhile.
        advance();
        checkPipeline();
        if (stopping.getAsBoolean()) {
          return;
        }
      }
    }
    advance();
  }

  /**
   * The fetch position is no longer in the partition (OffsetOutOfRangeException): retention
   * deleted it, the partition was truncated, or the topic was re-created. Lets the records in
   * flight finish, then moves to the log start (deleted: records counted as missed; re-created:
   * the new topic is read from its start) or the end (truncated), logged and counted.
   */
  private void resetPosition() throws InterruptedException {
    awaitPipelineEmpty();
    long begin = logStart();
    long end = endOffset();
    long to;
    if (parts.topicWatch().recreatedNow()) {
      metrics.offsetReset("topic_recreated");
      log.error("msg=\"topic re-created: reading the new topic from its start\" partition={} position={}"
          + " log_start={} end={}", partition, expectedNext, begin, end);
      to = begin;
    } else {
      to = parts.startPosition().clamp(expectedNext, begin, end);
    }
    moveTo(to);
  }

  private void awaitPipelineEmpty() throws InterruptedException {
    while (!pipeline.drain(100)) {
      checkPipeline();
      advance();
      if (stopping.getAsBoolean()) {
        throw new WakeupException();
      }
    }
    advance();
  }

  /** Surfaces a deleted topic (not ready) and re-reads a re-created one from its start. */
  private void watchTopic() throws InterruptedException {
    TopicWatch.Observation o = parts.topicWatch().poll();
    if (o == null) {
      return;
    }
    switch (o.kind()) {
      case MISSING -> {
        if (!o.detail().equals(state.blocked())) {
          log.error("msg=\"cannot consume: {}; not ready until it is back\" partition={}", o.detail(), partition);
        }
        state.blocked(o.detail());
      }
      case PRESENT -> {
        if (state.blocked() != null) {
          log.info("msg=\"topic available again\" partition={}", partition);
        }
        state.blocked(null);
      }
      case RECREATED -> {
        state.blocked(null);
        awaitPipelineEmpty();
        metrics.offsetReset("topic_recreated");
        long begin = logStart();
        log.error("msg=\"{}: reading the new topic from its start\" partition={} position={} log_start={}", o.detail(),
            partition, expectedNext, begin);
        moveTo(begin);
      }
      default -> throw new IllegalStateException("unknown observation " + o.kind());
    }
  }

  /** Updates the applied position, lag, commits when due, and the catch-up state. */
  private void advance() throws InterruptedException {
    updateApplied();
    TopicPartition tp = parts.tp();
    OptionalLong lag = consumer.currentLag(tp);
    if (lag.isPresent()) {
      long hw = consumer.position(tp) + lag.getAsLong();
      state.endOffsetSeen(Math.max(state.endOffsetSeen(), hw));
      metrics.lagRecords.set(Math.max(0, hw - state.applied()));
    } else if (state.endOffsetSeen() >= 0) {
      metrics.lagRecords.set(Math.max(0, state.endOffsetSeen() - state.applied())); // e.g. while fetchers read ahead
    }
    parts.topicWatch().pollEnd(state::endProbe);
    parts.committer().maybeCommit(consumer, tracker.committable());
    if (state.recoverIfPast(tracker.inFlight() == 0)) {
      log.info("msg=\"partition reader recovered\" partition={} offset={}", partition, state.applied());
    }
    if (!state.caughtUp()) {
      switch (parts.catchUp().check(state.applied())) {
        case DONE -> onCaughtUp.run();
        case NEXT_ROUND -> parts.catchUp().startRound(endOffset(), state.applied());
        default -> parts.catchUp().logProgress(state.applied(), state.endOffsetSeen());
      }
    }
  }

  private void updateApplied() {
    long done = tracker.committable();
    if (done >= 0 && done != state.applied()) {
      state.applied(done, tracker.lastDoneTimestamp());
    }
  }
}
