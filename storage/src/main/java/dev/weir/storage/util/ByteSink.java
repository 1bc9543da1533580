package dev.weir.storage.util;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable byte buffer with the encodings Weir's files use: big-endian fixed ints, Go-style
 * varints (zig-zag for signed), uvarint-prefixed UTF-8 strings. Reusable through {@link #reset()}.
 *
 * <p>Not thread-safe.
 */
public final class ByteSink {
  private byte[] buf;
  private int len;

  public ByteSink(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  public void reset() {
    len = 0;
  }

  public int length() {
    return len;
  }

  public byte[] array() {
    return buf;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, len);
  }

  /** A view of the written bytes (valid until the next write or reset). */
  public ByteBuffer asBuffer() {
    return ByteBuffer.wrap(buf, 0, len);
  }

  private void ensure(int more) {
    if (len + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(len + more, buf.length * 2));
    }
  }

  public ByteSink put(int b) {
    ensure(1);
    buf[len++] = (byte) b;
    return this;
  }

  public ByteSink put(byte[] b, int off, int n) {
    ensure(n);
    System.arraycopy(b, off, buf, len, n);
    len += n;
    return this;
  }

  public ByteSink put(byte[] b) {
    return put(b, 0, b.length);
  }

  public ByteSink putBe32(int v) {
    ensure(4);
    buf[len++] = (byte) (v >>> 24);
    buf[len++] = (byte) (v >>> 16);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
    return this;
  }

  public ByteSink putBe64(long v) {
    putBe32((int) (v >>> 32));
    return putBe32((int) v);
  }

  /** Overwrites 4 bytes at {@code pos} (for lengths known only after the content). */
  public void setBe32(int pos, int v) {
    buf[pos] = (byte) (v >>> 24);
    buf[pos + 1] = (byte) (v >>> 16);
    buf[pos + 2] = (byte) (v >>> 8);
    buf[pos + 3] = (byte) v;
  }

  public ByteSink putUvarint(long v) {
    ensure(10);
    while ((v & ~0x7FL) != 0) {
      buf[len++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[len++] = (byte) v;
    return this;
  }

  public ByteSink putVarint(long v) {
    return putUvarint((v << 1) ^ (v >> 63));
  }

  public ByteSink putString(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    putUvarint(b.length);
    return put(b);
  }

  public ByteSink putDouble(double d) {
    return putBe64(Double.doubleToRawLongBits(d));
  }

  /** Zero bytes until the length is a multiple of {@code align}. */
  public ByteSink pad(int align) {
    while (len % align != 0) {
      put(0);
    }
    return this;
  }

  public static int uvarintSize(long v) {
    int n = 1;
    while ((v & ~0x7FL) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }
}
