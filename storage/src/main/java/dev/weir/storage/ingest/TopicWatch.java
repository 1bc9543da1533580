package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * Watches the reader's topic through an {@link Admin} client, without blocking the fetch loop: a
 * topic deleted at run time (a consumer only logs warnings then) and a topic re-created under the
 * same name (new topic ID; its offsets start again at 0, so the old position would skip or
 * re-read records) are reported by {@link #poll()}, checked every {@value #CHECK_MILLIS} ms. Also
 * answers strong reads' end-offset queries.
 *
 * <p>{@link #poll()} and {@link #recreatedNow()} are called by the reader thread; {@link
 * #currentEndOffset()} by any thread.
 */
final class TopicWatch implements AutoCloseable {
  static final long CHECK_MILLIS = 10_000;
  /**
   * How often {@link #pollEnd} asks for the end offset (Mimir's
   * {@code last-produced-offset-poll-interval} default): the bound on how far a caught-up
   * reader's consumed-up-to time trails now.
   */
  static final long END_PROBE_MILLIS = 1_000;

  /** Receives an end offset probe's answer and the time the probe was sent. */
  @FunctionalInterface
  interface EndListener {
    void end(long endOffset, long sentAtMillis);
  }

  /** What a check found. */
  enum Kind { PRESENT, MISSING, RECREATED }

  /** A check's outcome, with a description for logs and the not-ready reason. */
  record Observation(Kind kind, String detail) {}

  private final KafkaConfig config;
  private final TopicPartition tp;
  private final LongSupplier clock;
  private volatile @Nullable Admin admin;
  private @Nullable KafkaFuture<TopicDescription> pending;
  private long nextCheck;
  private @Nullable Uuid topicId;
  private @Nullable KafkaFuture<ListOffsetsResultInfo> pendingEnd;
  private long pendingEndSentAt;
  private long nextEndProbe;

  TopicWatch(KafkaConfig config, TopicPartition tp, LongSupplier clock) {
    this.config = config;
    this.tp = tp;
    this.clock = clock;
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

  /**
   * The outcome of a check that finished since the last call, or null (none due, still running,
   * or it failed for a reason other than a missing topic: the fetch loop sees broker trouble
   * itself).
   */
  @Nullable Observation poll() {
    KafkaFuture<TopicDescription> f = pending;
    long now = clock.getAsLong();
    if (f == null) {
      if (now >= nextCheck) {
        nextCheck = now + CHECK_MILLIS;
        pending = describe();
      }
      return null;
    }
    if (!f.isDone()) {
      return null;
    }
    pending = null;
    try {
      return observe(f.get());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return new Observation(Kind.MISSING, "topic " + tp.topic() + " does not exist (deleted?)");
      }
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Asks for the partition's end offset every {@value #END_PROBE_MILLIS} ms without blocking, and
   * hands each answer to {@code listener} with the time its request was sent. A failed probe is
   * dropped (the next one is sent a probe interval later), so the consumed-up-to time stops moving
   * while Kafka does not answer. Reader thread only.
   */
  void pollEnd(EndListener listener) {
    KafkaFuture<ListOffsetsResultInfo> f = pendingEnd;
    long now = clock.getAsLong();
    if (f == null) {
      if (now >= nextEndProbe) {
        nextEndProbe = now + END_PROBE_MILLIS;
        pendingEndSentAt = now;
        pendingEnd = admin().listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp);
      }
      return;
    }
    if (!f.isDone()) {
      return;
    }
    pendingEnd = null;
    try {
      listener.end(f.get().offset(), pendingEndSentAt);
    } catch (ExecutionException e) {
      // Dropped: the next probe tries again; meanwhile consumed-up-to does not move.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Checks at once (blocking up to 10 s) whether the topic was re-created; false when unsure. */
  boolean recreatedNow() {
    try {
      Observation o = observe(describe().get(10, TimeUnit.SECONDS));
      return o.kind() == Kind.RECREATED;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return false;
    }
  }

  private KafkaFuture<TopicDescription> describe() {
    return admin().describeTopics(List.of(tp.topic())).topicNameValues().get(tp.topic());
  }

  private Observation observe(TopicDescription d) {
    Uuid before = topicId;
    topicId = d.topicId();
    if (d.partitions().stream().noneMatch(p -> p.partition() == tp.partition())) {
      return new Observation(Kind.MISSING, "partition " + tp.partition() + " does not exist: topic " + tp.topic()
          + " has " + d.partitions().size() + " partitions");
    }
    if (before != null && !before.equals(d.topicId())) {
      return new Observation(Kind.RECREATED, "topic " + tp.topic() + " was re-created (topic ID " + before + " → "
          + d.topicId() + ")");
    }
    return new Observation(Kind.PRESENT, "topic " + tp.topic() + " present");
  }

  /** The partition's end offset now (what a strong read must wait for). */
  long currentEndOffset() {
    try {
      return admin().listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS)
          .offset();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ServerErrorException("cannot read the end offset of partition " + tp.partition() + ": " + e, e);
    }
  }

  @Override
  public void close() {
    Admin a = admin;
    if (a != null) {
      a.close(java.time.Duration.ofSeconds(5));
    }
  }
}
