package dev.weir.storage.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Damages files on disk the way bit rot or a crash would, for recovery tests. */
public final class Corrupt {
  private Corrupt() {}

  /** Flips one bit of the byte at {@code pos}. */
  public static void flipByte(Path p, long pos) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, pos);
      b.put(0, (byte) (b.get(0) ^ 0x40));
      b.position(0);
      ch.write(b, pos);
    }
  }

  /** Cuts the file to {@code size} bytes (a write torn by a crash). */
  public static void truncate(Path p, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }
}
