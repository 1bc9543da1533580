package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.block.Block;

/**
 * Decides whether retention may delete a local block that is past the retention period. Without
 * a gate every such block is deleted; with ingesters shipping blocks to a bucket the shipper's
 * gate keeps a block until it is in the bucket, as Mimir's ingesters do.
 *
 * <p>Implementations are called from the storage's background thread and must be thread-safe.
 */
@FunctionalInterface
public interface RetentionGate {
  /** Deletes whatever retention selects (the behaviour without shipping). */
  RetentionGate ALWAYS = (tenant, block) -> true;

  /** Whether {@code block} of {@code tenant}, already past retention, may be deleted now. */
  boolean mayDelete(String tenant, Block block);
}
