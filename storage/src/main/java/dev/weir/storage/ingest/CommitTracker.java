package dev.weir.storage.ingest;

import java.util.ArrayDeque;

/**
 * Knows which offset may be committed: records are registered in offset order as they enter the
 * pipeline and marked done (from any thread) when fully appended or skipped as client errors.
 * {@link #committable()} returns the offset <em>after</em> the last record of the contiguous done
 * prefix — Kafka's convention (the committed offset is the next offset to read), so Kafka's own
 * tools show the true lag. A record still in flight or failing holds back everything after it.
 *
 * <p>{@link #add} and {@link #committable} are called by the fetch thread only; {@link
 * Entry#done()} from any thread.
 */
final class CommitTracker {
  /** A record in the pipeline. */
  static final class Entry {
    final long offset;
    final long timestampMillis;
    final int bytes;
    private volatile boolean done;

    Entry(long offset, long timestampMillis, int bytes) {
      this.offset = offset;
      this.timestampMillis = timestampMillis;
      this.bytes = bytes;
    }

    void done() {
      done = true;
    }

    boolean isDone() {
      return done;
    }
  }

  private final ArrayDeque<Entry> pending = new ArrayDeque<>();
  private long next = -1;
  private long lastDoneTimestamp = -1;

  void add(Entry e) {
    pending.addLast(e);
  }

  /** The next offset to read after everything done so far, or -1 when nothing was done yet. */
  long committable() {
    Entry head;
    while ((head = pending.peekFirst()) != null && head.isDone()) {
      pending.pollFirst();
      next = head.offset + 1;
      lastDoneTimestamp = head.timestampMillis;
    }
    return next;
  }

  /** Timestamp of the newest record of the done prefix, or -1. */
  long lastDoneTimestamp() {
    return lastDoneTimestamp;
  }

  int inFlight() {
    return pending.size();
  }

  /** Starts from a known position (the offset the fetch loop seeks to). */
  void resetTo(long nextOffset) {
    pending.clear();
    next = nextOffset;
  }
}
