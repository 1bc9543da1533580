package dev.weir.ingester.ingest;

/**
 * What a query with {@code X-Read-Consistency: strong} waits for before reading: in Kafka mode,
 * that the partition is consumed up to the end offset it had when the query arrived.
 */
@FunctionalInterface
public interface ReadConsistency {
  /** Classic mode: every acknowledged write is already readable. */
  ReadConsistency IMMEDIATE = () -> { };

  void awaitStrong();
}
