package dev.weir.storage.ingest.batch;

import dev.weir.proto.prompb.WriteRequest;

/**
 * Where a {@link BatchingConsumer} delivers a cycle: a batch begins at the partition's committed
 * offset, receives every decoded record in offset order, and is flushed once; the consumer commits
 * the batch's end offset only after {@link Batch#flush} returned. A flush may be attempted again
 * for the same start offset (after a failure or a crash), so a sink must make it idempotent.
 */
public interface BatchSink {
  /**
   * Begins a batch of {@code partition} starting at {@code startOffset}, whose first record has
   * the timestamp {@code firstRecordTimestamp} (the same on every attempt of this batch).
   */
  Batch begin(int partition, long startOffset, long firstRecordTimestamp);

  /** One cycle's worth of records. Closed after the flush or when the cycle is abandoned. */
  interface Batch extends AutoCloseable {
    void add(String tenant, WriteRequest request, long offset, long recordTimestamp);

    /**
     * Makes the batch durable in the sink.
     *
     * @param endOffset the offset after the last record added (exclusive)
     * @throws SinkException retryable (the cycle is redone from the committed offset after a
     *     backoff) or not (the consumer stops)
     */
    void flush(long endOffset) throws SinkException;

    @Override
    void close();
  }
}
