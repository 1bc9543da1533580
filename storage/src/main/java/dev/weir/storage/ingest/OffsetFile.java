package dev.weir.storage.ingest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

/**
 * The last committed offset of a partition, also kept in the data dir ({@code
 * kafka-offsets/<topic>-<partition>}), so a restart can resume when the broker lost the group's
 * offset. Written atomically: temp file, fsync, rename, then fsync of the directory (without it
 * the rename itself may not survive a power loss, leaving the older offset or no file). Not
 * thread-safe: the fetch thread owns it.
 *
 * <p>Reading: a missing file is "no offset"; anything but one decimal number (garbage, an empty
 * or torn file, which the atomic write should make impossible) is an {@link IOException}, which
 * the reader logs and treats as no offset.
 */
final class OffsetFile {
  /** Makes a directory's entries (a rename) durable. */
  @FunctionalInterface
  interface DirSync {
    void sync(Path dir) throws IOException;
  }

  /** fsync of the directory itself (Linux: {@code open(dir, O_RDONLY)} + {@code fsync}). */
  static final DirSync FSYNC_DIR = dir -> {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  };

  private final Path file;
  private final DirSync dirSync;

  OffsetFile(Path dataDir, String topic, int partition) {
    this(dataDir, topic, partition, FSYNC_DIR);
  }

  /** Test seam: {@code dirSync} observes (or fails) the directory fsync. */
  OffsetFile(Path dataDir, String topic, int partition, DirSync dirSync) {
    this.file = dataDir.resolve("kafka-offsets").resolve(topic + "-" + partition);
    this.dirSync = dirSync;
  }

  Path path() {
    return file;
  }

  OptionalLong read() throws IOException {
    if (!Files.exists(file)) {
      return OptionalLong.empty();
    }
    String s = Files.readString(file, StandardCharsets.UTF_8).trim();
    try {
      long offset = Long.parseLong(s);
      if (offset < 0) {
        throw new NumberFormatException("negative");
      }
      return OptionalLong.of(offset);
    } catch (NumberFormatException e) {
      throw new IOException("offset file " + file + " holds \"" + s + "\", not an offset");
    }
  }

  /**
   * Replaces the stored offset durably.
   *
   * @throws IOException when any step fails; the previous offset is then still in place, or (if
   *     only the directory fsync failed) the new one may or may not survive a power loss
   */
  void write(long nextOffset) throws IOException {
    Path dir = file.getParent();
    Files.createDirectories(dir);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer b = ByteBuffer.wrap((nextOffset + "\n").getBytes(StandardCharsets.UTF_8));
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    dirSync.sync(dir);
  }
}
