package dev.weir.storage.tsdb.block;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.util.ByteSink;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Writes a block's {@code chunks/000001, 000002, ...} in Prometheus' format: an 8-byte header
 * (magic 0x85BD40DD, version 1, 3 bytes padding), then per chunk {@code uvarint len | encoding |
 * data | CRC32C(encoding, data)}. A chunk's reference is {@code segment << 32 | offset} with
 * segments counted from 0. Files roll at 512 MiB.
 *
 * <p>Not thread-safe.
 */
final class ChunkWriter implements Closeable {
  static final int MAGIC = 0x85BD40DD;
  static final int HEADER_BYTES = 8;
  static final long MAX_SEGMENT_BYTES = 512L << 20;

  private final Path dir;
  private final ByteSink buf = new ByteSink(1 << 20);
  private @Nullable FileChannel current;
  private int segment = -1;
  private long pos;

  ChunkWriter(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
  }

  /** Writes one chunk of the given encoding ({@link Chunks}) and returns its reference. */
  long write(byte encoding, byte[] data) throws IOException {
    int size = ByteSink.uvarintSize(data.length) + 1 + data.length + 4;
    if (current == null || pos + buf.length() + size > MAX_SEGMENT_BYTES) {
      nextSegment();
    }
    long ref = ((long) segment << 32) | (pos + buf.length());
    buf.putUvarint(data.length).put(encoding).put(data);
    CRC32C crc = new CRC32C();
    crc.update(encoding);
    crc.update(data);
    buf.putBe32((int) crc.getValue());
    if (buf.length() >= 1 << 20) {
      flush();
    }
    return ref;
  }

  private void nextSegment() throws IOException {
    closeCurrent();
    segment++;
    current = FileChannel.open(dir.resolve(String.format("%06d", segment + 1)),
        StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    pos = 0;
    buf.putBe32(MAGIC).put(1).put(0).put(0).put(0);
  }

  private void flush() throws IOException {
    FileChannel ch = current;
    if (ch == null) {
      return;
    }
    ByteBuffer b = buf.asBuffer();
    while (b.hasRemaining()) {
      ch.write(b);
    }
    pos += buf.length();
    buf.reset();
  }

  private void closeCurrent() throws IOException {
    FileChannel ch = current;
    if (ch != null) {
      flush();
      ch.force(true);
      ch.close();
      current = null;
    }
  }

  @Override
  public void close() throws IOException {
    closeCurrent();
  }
}
