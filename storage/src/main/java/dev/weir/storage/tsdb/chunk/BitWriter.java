package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;

/**
 * A growable bit stream written most significant bit first, Prometheus' {@code bstream}, plus the
 * number codings the histogram chunks share: {@code varbit} integers ({@code varbit.go}) and the
 * Gorilla XOR float coding ({@code xorWrite}).
 *
 * <p>A stream may start with a fixed header of whole bytes that the owner patches with
 * {@link #setByte} (sample count, flags); bits are appended after it. Not thread-safe.
 *
 * <p>Not final: {@link XorChunkBase} extends it so that a series' head chunk is fields of the
 * series, not objects of its own (appender, writer, XOR state).
 */
class BitWriter {
  /** Prometheus clamps leading zeros to 31 so they fit in 5 bits. */
  private static final int MAX_LEADING = 31;

  private static final byte[] EMPTY = new byte[0];
  /** The longest stream, in bytes: its length in bits must fit an int. */
  static final int MAX_BYTES = Integer.MAX_VALUE >>> 3;

  private byte[] buf;
  /** Bits written; an int (4 bytes less per head series): a stream stays under 256 MiB ({@link #ensure}). */
  private int bitLen;

  BitWriter(int headerBytes, int initialBytes) {
    buf = new byte[Math.max(initialBytes, headerBytes + 1)];
    bitLen = 8 * headerBytes;
  }

  /** A writer without a buffer yet: {@link #restart} gives it one. */
  BitWriter() {
    buf = EMPTY;
  }

  /**
   * Starts a new stream after {@code headerBytes} of header: reuses the buffer, zeroing what was
   * written, or allocates {@code initialBytes} when there is none ({@link #release}).
   */
  void restart(int headerBytes, int initialBytes) {
    if (buf.length == 0) {
      buf = new byte[Math.max(initialBytes, headerBytes + 1)];
    } else {
      Arrays.fill(buf, 0, sizeBytes(), (byte) 0);
    }
    bitLen = 8 * headerBytes;
  }

  /** Drops the buffer; {@link #restart} must come before the next write. */
  void release() {
    buf = EMPTY;
    bitLen = 0;
  }

  int sizeBytes() {
    return (bitLen + 7) >>> 3;
  }

  int capacityBytes() {
    return buf.length;
  }

  byte[] bytes() {
    return Arrays.copyOf(buf, sizeBytes());
  }

  /**
   * Reads the byte the next write goes to (or the buffer's last), for a caller warming the cache
   * ahead of appends; safe without the owner's lock (a racing write may make it read another
   * byte of the same or the previous buffer).
   */
  int touch() {
    byte[] b = buf;
    // Null only to a racing reader that sees the owner before its constructor's writes.
    return b == null || b.length == 0 ? 0 : b[Math.min(bitLen >>> 3, b.length - 1)];
  }

  /**
   * The unsigned LEB128 varint at byte {@code index} (written by whole bytes at a byte boundary);
   * the stream must hold it.
   */
  long uvarintAt(int index) {
    long x = 0;
    for (int shift = 0; ; shift += 7) {
      int b = buf[index++];
      x |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return x;
      }
    }
  }

  void setByte(int index, int value) {
    buf[index] = (byte) value;
  }

  int getByte(int index) {
    return buf[index] & 0xff;
  }

  void writeBit(boolean bit) {
    ensure(1);
    if (bit) {
      buf[bitLen >>> 3] |= (byte) (0x80 >>> (bitLen & 7));
    }
    bitLen++;
  }

  /**
   * Writes the low {@code n} bits of {@code bits} (0 ≤ n ≤ 64), most significant first: the rest
   * of the current byte, then whole bytes, then the head of the next. Bytes past the written bits
   * are always zero (the buffer only grows, zero-filled), so whole bytes are stored, not merged.
   */
  void writeBits(long bits, int n) {
    if (n <= 0) {
      return;
    }
    ensure(n);
    long v = n == 64 ? bits : bits & ((1L << n) - 1);
    int idx = bitLen >>> 3;
    int free = 8 - (bitLen & 7);
    bitLen += n;
    if (n <= free) {
      buf[idx] |= (byte) (v << (free - n));
      return;
    }
    n -= free;
    buf[idx++] |= (byte) (v >>> n);
    while (n >= 8) {
      n -= 8;
      buf[idx++] = (byte) (v >>> n);
    }
    if (n > 0) {
      buf[idx] = (byte) (v << (8 - n));
    }
  }

  void writeByte(int b) {
    writeBits(b & 0xff, 8);
  }

  void writeDouble(double v) {
    writeBits(Double.doubleToRawLongBits(v), 64);
  }

  /**
   * Prometheus' {@code putVarbitInt}: a unary prefix of up to eight bits picks a width of 0, 3, 6,
   * 9, 12, 18, 25, 56 or 64 bits for the two's-complement value.
   */
  void writeVarbitInt(long v) {
    if (v == 0) {
      writeBit(false);
    } else if (XorChunkBase.bitRange(v, 3)) {
      writeBits(0b10, 2);
      writeBits(v, 3);
    } else if (XorChunkBase.bitRange(v, 6)) {
      writeBits(0b110, 3);
      writeBits(v, 6);
    } else if (XorChunkBase.bitRange(v, 9)) {
      writeBits(0b1110, 4);
      writeBits(v, 9);
    } else if (XorChunkBase.bitRange(v, 12)) {
      writeBits(0b11110, 5);
      writeBits(v, 12);
    } else if (XorChunkBase.bitRange(v, 18)) {
      writeBits(0b111110, 6);
      writeBits(v, 18);
    } else if (XorChunkBase.bitRange(v, 25)) {
      writeBits(0b1111110, 7);
      writeBits(v, 25);
    } else if (XorChunkBase.bitRange(v, 56)) {
      writeBits(0b11111110, 8);
      writeBits(v, 56);
    } else {
      writeBits(0b11111111, 8);
      writeBits(v, 64);
    }
  }

  /** Prometheus' {@code putVarbitUint}: the same prefixes, the value taken as unsigned. */
  void writeVarbitUint(long v) {
    int bits = 64 - Long.numberOfLeadingZeros(v);
    if (v == 0) {
      writeBit(false);
    } else if (bits <= 3) {
      writeBits(0b10, 2);
      writeBits(v, 3);
    } else if (bits <= 6) {
      writeBits(0b110, 3);
      writeBits(v, 6);
    } else if (bits <= 9) {
      writeBits(0b1110, 4);
      writeBits(v, 9);
    } else if (bits <= 12) {
      writeBits(0b11110, 5);
      writeBits(v, 12);
    } else if (bits <= 18) {
      writeBits(0b111110, 6);
      writeBits(v, 18);
    } else if (bits <= 25) {
      writeBits(0b1111110, 7);
      writeBits(v, 25);
    } else if (bits <= 56) {
      writeBits(0b11111110, 8);
      writeBits(v, 56);
    } else {
      writeBits(0b11111111, 8);
      writeBits(v, 64);
    }
  }

  /**
   * Gorilla XOR coding of {@code value} against {@code state.value}, updating the state's window
   * (Prometheus' {@code xorWrite}; a fresh state has {@link XorState#leading} 0xff).
   */
  void writeXor(XorState state, double value) {
    long delta = Double.doubleToRawLongBits(value) ^ Double.doubleToRawLongBits(state.value);
    state.value = value;
    int window = writeXorDelta(delta, state.leading, state.trailing);
    state.leading = window >>> 8;
    state.trailing = window & 0xff;
  }

  /**
   * Writes an XOR {@code delta} given the current window ({@code leading} 0xff when there is none
   * yet) and returns the window after it, packed as {@code leading << 8 | trailing}.
   */
  final int writeXorDelta(long delta, int leading, int trailing) {
    if (delta == 0) {
      writeBit(false);
      return leading << 8 | trailing;
    }
    writeBit(true);
    int newLeading = Math.min(Long.numberOfLeadingZeros(delta), MAX_LEADING);
    int newTrailing = Long.numberOfTrailingZeros(delta);
    if (leading != 0xff && newLeading >= leading && newTrailing >= trailing) {
      writeBit(false);
      writeBits(delta >>> trailing, 64 - leading - trailing);
      return leading << 8 | trailing;
    }
    writeBit(true);
    writeBits(newLeading, 5);
    int sigbits = 64 - newLeading - newTrailing;
    // 64 significant bits are written as 0: 6 bits cannot hold 64, and 0 never occurs otherwise.
    writeBits(sigbits & 0x3f, 6);
    writeBits(delta >>> newTrailing, sigbits);
    return newLeading << 8 | newTrailing;
  }

  private void ensure(int moreBits) {
    long needBytes = ((long) bitLen + moreBits + 7) >>> 3;
    if (needBytes > buf.length) {
      if (needBytes > MAX_BYTES) {
        throw new IllegalStateException("a chunk's bit stream would pass " + MAX_BYTES + " bytes");
      }
      buf = Arrays.copyOf(buf, (int) Math.min(MAX_BYTES, Math.max(needBytes, buf.length + (buf.length >> 1))));
    }
  }

  /** The last value and leading/trailing-zero window of one XOR-coded field. */
  static final class XorState {
    double value;
    int leading = 0xff;
    int trailing;
  }
}
