package dev.weir.storage.ingest;

import java.io.IOException;
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
 * offset. Written atomically (temp file, fsync, rename). Not thread-safe: the fetch thread owns it.
 */
final class OffsetFile {
  private final Path file;

  OffsetFile(Path dataDir, String topic, int partition) {
    this.file = dataDir.resolve("kafka-offsets").resolve(topic + "-" + partition);
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
      return OptionalLong.of(Long.parseLong(s));
    } catch (NumberFormatException e) {
      throw new IOException("offset file " + file + " holds \"" + s + "\", not an offset");
    }
  }

  void write(long nextOffset) throws IOException {
    Files.createDirectories(file.getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(java.nio.ByteBuffer.wrap((nextOffset + "\n").getBytes(StandardCharsets.UTF_8)));
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
