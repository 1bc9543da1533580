package dev.weir.ingester.ingest;

import dev.weir.storage.ingest.PartitionFreshness;
import java.util.List;

/**
 * What a read waits for before it runs ({@link ReadLevel}), and how fresh the local data is. In
 * Kafka mode the partition reader: a strong read waits until the partition is consumed up to the
 * end offset it had when the query arrived; a read naming offsets waits until this ingester's
 * partition consumed the named one.
 */
public interface ReadConsistency {
  /** Classic mode: every acknowledged write is already readable; there is no partition to report. */
  ReadConsistency IMMEDIATE = level -> { };

  /**
   * Waits as {@code level} asks.
   *
   * @throws dev.weir.storage.errors.ServerErrorException when the partition is not consumed that far
   *     within the strong-read timeout
   */
  void await(ReadLevel level);

  /** The partitions this process reads from, with how far each is consumed; empty in classic mode. */
  default List<PartitionFreshness> freshness() {
    return List.of();
  }
}
