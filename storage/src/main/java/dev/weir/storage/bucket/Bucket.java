package dev.weir.storage.bucket;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Long-term block storage: blocks in Prometheus' format under {@code <tenant>/<block ID>/}, as
 * Mimir's bucket holds them. {@link FilesystemBucket} is the default; an object store implements
 * the same operations.
 */
public interface Bucket {
  /** A block in the bucket. */
  record BlockRef(String tenant, String id) {}

  /**
   * Uploads a local block directory as {@code tenant/id}, replacing a block with the same ID.
   * Readers never see a partial block: it appears whole or not at all.
   */
  void upload(String tenant, String id, Path localBlockDir) throws IOException;

  /** Every complete block. */
  List<BlockRef> list() throws IOException;

  /**
   * Uploads that did not finish (their owner crashed), by the block ID they were for, and blocks
   * whose deletion did not finish (their meta.json is gone, other files are left).
   */
  List<BlockRef> listIncomplete() throws IOException;

  /** The block's {@code meta.json}. */
  byte[] meta(String tenant, String id) throws IOException;

  /**
   * The size of one file of a complete block ({@code index}, {@code chunks/000001}, ...).
   *
   * @throws java.nio.file.NoSuchFileException when the block or file does not exist
   */
  long size(String tenant, String id, String file) throws IOException;

  /**
   * {@code length} bytes of one file of a complete block from {@code offset} (a range read: an
   * object store fetches only those bytes); fewer only when the file ends first.
   *
   * @throws java.nio.file.NoSuchFileException when the block or file does not exist
   */
  byte[] read(String tenant, String id, String file, long offset, int length) throws IOException;

  /**
   * Deletes a block, or the leftovers of an incomplete upload of it; no error when absent. The
   * block's meta.json goes first, so a reader never lists a block whose other files are gone, and
   * a {@link DeletionMark} last, so a deletion cut short is found by {@link #listIncomplete} with
   * its mark and can be finished.
   */
  void delete(String tenant, String id) throws IOException;

  /**
   * Writes one small file into the directory of a block (complete or not), replacing it: a marker
   * such as {@link DeletionMark#FILE}. Readers see the old content or the new, never a part.
   */
  default void putFile(String tenant, String id, String file, byte[] content) throws IOException {
    throw new UnsupportedOperationException("bucket " + describe() + " cannot write markers");
  }

  /** A human-readable location, for logs. */
  String describe();
}
