package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * What a partition reader tells the outside: how far it has applied, whether it is caught up,
 * and why it is not ready. Written by the reader thread, read by any ({@code /ready}, strong
 * reads, gauges). The not-ready reasons, most urgent first: the reader failed and is restarting;
 * the topic or partition is missing; (until caught up) Kafka cannot be reached; still catching up.
 *
 * <p>Thread-safe.
 */
final class ReaderState {
  private final int partition;
  private final Object appliedMonitor = new Object();
  private volatile long applied = -1;
  private volatile long endOffsetSeen = -1;
  private volatile long appliedTimestamp = -1;
  private volatile long endProbeOffset = -1;
  private volatile long probeSentAt = -1;
  private volatile long coveredAtMillis = -1;
  private volatile boolean caughtUp;
  private volatile @Nullable String blocked;
  private volatile @Nullable String kafkaProblem;
  private volatile @Nullable String failed;
  private volatile long failedAt = -1;

  ReaderState(int partition) {
    this.partition = partition;
  }

  long applied() {
    return applied;
  }

  /** Sets the applied offset (the next offset after the last fully appended record) and wakes strong reads. */
  void applied(long offset) {
    applied = offset;
    cover();
    synchronized (appliedMonitor) {
      appliedMonitor.notifyAll();
    }
  }

  /**
   * Sets the applied offset with the timestamp of the record before it (the last one appended),
   * and wakes strong reads.
   */
  void applied(long offset, long recordTimestamp) {
    if (recordTimestamp >= 0) {
      appliedTimestamp = recordTimestamp;
    }
    applied(offset);
  }

  /**
   * An end offset probe sent at {@code sentAtMillis} answered {@code endOffset}: every record
   * acknowledged before that time lies below it. Called by the reader thread only.
   */
  void endProbe(long endOffset, long sentAtMillis) {
    endOffsetSeen = Math.max(endOffsetSeen, endOffset);
    probed(endOffset, sentAtMillis);
  }

  /**
   * The end offset read by the reader itself (catch-up rounds, an out-of-range reset): it replaces
   * the one seen before, which a truncated or re-created partition may have lowered.
   */
  void endOffsetRead(long endOffset, long sentAtMillis) {
    endOffsetSeen = endOffset;
    probed(endOffset, sentAtMillis);
  }

  private void probed(long endOffset, long sentAtMillis) {
    endProbeOffset = endOffset;
    probeSentAt = sentAtMillis;
    cover();
  }

  /** Moves consumed-up-to to the last probe's time once the applied offset reached its answer. */
  private void cover() {
    long end = endProbeOffset;
    if (end >= 0 && applied >= end && probeSentAt > coveredAtMillis) {
      coveredAtMillis = probeSentAt;
    }
  }

  /** The reader moved back (a rewind or a re-created topic): what it consumed before no longer counts. */
  void movedBack() {
    appliedTimestamp = -1;
    coveredAtMillis = -1;
    endProbeOffset = -1;
  }

  /** See {@link PartitionFreshness}. */
  PartitionFreshness freshness() {
    long a = applied;
    long end = endOffsetSeen;
    long behind = a < 0 || end < 0 ? -1 : Math.max(0, end - a);
    long upTo = Math.max(coveredAtMillis, appliedTimestamp);
    return new PartitionFreshness(partition, a, end, behind, upTo, notReadyReason() == null);
  }

  long endOffsetSeen() {
    return endOffsetSeen;
  }

  void endOffsetSeen(long offset) {
    endOffsetSeen = offset;
  }

  boolean caughtUp() {
    return caughtUp;
  }

  void caughtUp(boolean b) {
    caughtUp = b;
    if (b) {
      kafkaProblem = null;
    }
  }

  @Nullable String blocked() {
    return blocked;
  }

  /** The topic or partition is missing (null: present). */
  void blocked(@Nullable String why) {
    blocked = why;
  }

  @Nullable String kafkaProblem() {
    return kafkaProblem;
  }

  /** A Kafka call keeps failing (null: it succeeded). */
  void kafkaProblem(@Nullable String why) {
    kafkaProblem = why;
  }

  @Nullable String failed() {
    return failed;
  }

  /** The reader failed at the current applied offset and is restarting. */
  void failed(Throwable e) {
    failedAt = applied;
    failed = e.toString();
  }

  /**
   * Clears the failure once the new session got past the offset where the old one failed, or has
   * nothing in flight and nothing left to read.
   *
   * @return whether it was cleared now
   */
  boolean recoverIfPast(boolean nothingInFlight) {
    if (failed != null && (applied > failedAt || (nothingInFlight && applied >= endOffsetSeen))) {
      failed = null;
      return true;
    }
    return false;
  }

  /** Why the reader is not (yet) serving consistent data, or null. */
  @Nullable String notReadyReason() {
    String f = failed;
    if (f != null) {
      return "partition reader failed and is restarting from offset " + failedAt + ": " + f;
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
      long a = applied;
      return "catching up on partition " + partition + (end >= 0 && a >= 0
          ? ": " + Math.max(0, end - a) + " records behind" : "");
    }
    return null;
  }

  /**
   * Waits until every record before {@code endOffset} is appended.
   *
   * @throws ServerErrorException when that does not happen within the timeout, or the reader failed
   */
  void awaitApplied(long endOffset, Duration timeout) {
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
}
