package dev.weir.storage.ingest;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.wire.WireBatch;

/**
 * Where the reader appends what it consumes (the ingester). A push must be all-or-nothing for
 * server errors: when it throws {@link dev.weir.storage.errors.ServerErrorException} nothing of it
 * was stored, so the reader retries it; a {@link dev.weir.storage.errors.ClientErrorException}
 * means the valid part was stored and the rest is refused for good (counted, skipped).
 */
@FunctionalInterface
public interface Pusher {
  void push(String tenant, WriteRequest request);

  /** The same for series still in their protobuf bytes (what the reader hands over); override to avoid the copy. */
  default void push(String tenant, WireBatch batch) {
    push(tenant, batch.toWriteRequest());
  }

  /**
   * The same, for series of the records starting at Kafka offset {@code sourceOffset}; override
   * to record the offset with the data (the WAL's SOURCE record).
   */
  default void push(String tenant, WireBatch batch, long sourceOffset) {
    push(tenant, batch);
  }

  /**
   * The same, with the Kafka timestamp of the records (their produce time; the newest when the
   * reader combined consecutive records into one append): checks that depend on "now" (how far in
   * the future a sample may be) judge against it, so replaying a backlog hours later refuses nothing
   * that was valid when it was written. Override to use it; -1 when the records carry none.
   */
  default void push(String tenant, WireBatch batch, long sourceOffset, long recordTimestampMillis) {
    push(tenant, batch, sourceOffset);
  }
}
