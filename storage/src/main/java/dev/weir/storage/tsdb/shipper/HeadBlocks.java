package dev.weir.storage.tsdb.shipper;

import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.WeirMeta;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Tells the blocks that head compaction wrote, the only ones a shipper uploads (as in Mimir, whose
 * shipper skips blocks of compaction level above 1): compaction level 1, at least one sample, and
 * {@code weir.source} in meta.json either {@value TenantDb#HEAD_BLOCK_SOURCE} or absent (blocks
 * written before head compaction marked its blocks; it was then the only writer of local
 * blocks). A block copied in by hand from a block-builder ({@code "block-builder"}) or a
 * compacted block is not shipped.
 *
 * <p>Stateless.
 */
final class HeadBlocks {
  private HeadBlocks() {}

  /**
   * Whether head compaction wrote {@code block}.
   *
   * @throws IOException when its meta.json cannot be read
   */
  static boolean isHeadBlock(Block block) throws IOException {
    BlockMeta meta = block.meta();
    if (meta.level() != 1 || meta.numSamples() == 0) {
      return false;
    }
    String source = source(block.dir());
    return source == null || source.equals(TenantDb.HEAD_BLOCK_SOURCE);
  }

  /** The {@code weir.source} member of a block's meta.json, or null. */
  static @Nullable String source(Path blockDir) throws IOException {
    return WeirMeta.value(blockDir, "source");
  }
}
