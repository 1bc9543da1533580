package dev.weir.storage.util;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Reads the encodings of {@link ByteSink} from a {@link ByteBuffer} (heap or memory-mapped).
 * Reading past the end throws {@link java.nio.BufferUnderflowException}; a malformed varint
 * throws {@link IllegalStateException}.
 *
 * <p>Not thread-safe.
 */
public final class ByteSource {
  private final ByteBuffer buf;
  private final @Nullable StringCache strings;

  public ByteSource(ByteBuffer buf) {
    this(buf, null);
  }

  /** Reads {@link #string()}s through {@code strings} (repeated strings become one object). */
  public ByteSource(ByteBuffer buf, @Nullable StringCache strings) {
    this.buf = buf;
    this.strings = strings;
  }

  public ByteBuffer buffer() {
    return buf;
  }

  public int position() {
    return buf.position();
  }

  public void position(int pos) {
    buf.position(pos);
  }

  public int remaining() {
    return buf.remaining();
  }

  public int get() {
    return buf.get() & 0xff;
  }

  public int be32() {
    return buf.getInt();
  }

  public long be64() {
    return buf.getLong();
  }

  public double getDouble() {
    return Double.longBitsToDouble(buf.getLong());
  }

  public long uvarint() {
    long x = 0;
    int shift = 0;
    for (int i = 0; i < 10; i++) {
      long b = buf.get() & 0xff;
      x |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return x;
      }
      shift += 7;
    }
    throw new IllegalStateException("varint overflows 64 bits");
  }

  public long varint() {
    long u = uvarint();
    return (u >>> 1) ^ -(u & 1);
  }

  public String string() {
    long n = uvarint();
    if (n > buf.remaining()) {
      throw new IllegalStateException("string length " + n + " beyond the data");
    }
    StringCache c = strings;
    if (c != null) {
      return c.read(buf, (int) n);
    }
    byte[] b = new byte[(int) n];
    buf.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  public void skip(int n) {
    buf.position(buf.position() + n);
  }
}
