package dev.weir.storage.tsdb.block;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/** Reads chunks by reference from a block's memory-mapped chunk files. Thread-safe. */
final class ChunkReader {
  private final List<MappedByteBuffer> segments = new ArrayList<>();
  private final Path dir;

  ChunkReader(Path dir) throws IOException {
    this.dir = dir;
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.getFileName().toString().matches("\\d{6}")).sorted().toList();
    }
    for (Path f : files) {
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
        MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        if (m.capacity() < ChunkWriter.HEADER_BYTES || m.getInt(0) != ChunkWriter.MAGIC) {
          throw new IOException("bad chunk file header: " + f);
        }
        segments.add(m);
      }
    }
  }

  /** A chunk as stored: its encoding byte and data. */
  record RawChunk(byte encoding, byte[] data) {}

  /** The chunk at {@code ref}, checksum verified; an encoding Weir cannot read is an error. */
  RawChunk read(long ref) throws IOException {
    int seg = (int) (ref >>> 32);
    int off = (int) ref;
    if (seg >= segments.size()) {
      throw new IOException("chunk reference " + ref + " names a missing segment in " + dir);
    }
    ByteBuffer b = segments.get(seg).duplicate();
    b.position(off);
    ByteSource in = new ByteSource(b);
    int len = (int) in.uvarint();
    byte encoding = (byte) in.get();
    if (!Chunks.isKnown(encoding)) {
      throw new IOException("unsupported chunk encoding " + (encoding & 0xff) + " at " + ref + " in " + dir);
    }
    byte[] data = new byte[len];
    b.get(data);
    CRC32C crc = new CRC32C();
    crc.update(encoding);
    crc.update(data);
    if ((int) crc.getValue() != b.getInt()) {
      throw new IOException("chunk checksum mismatch at " + ref + " in " + dir);
    }
    return new RawChunk(encoding, data);
  }
}
