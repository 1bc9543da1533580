package dev.weir.storage.tsdb.chunk;

import java.util.Arrays;

/**
 * Appends float samples to a chunk in Prometheus' XOR encoding ({@code chunkenc.EncXOR}), so the
 * bytes can be written unchanged into a Prometheus block or sent in a remote-read response.
 *
 * <p>Layout: a 2-byte big-endian sample count, then a bit stream written most significant bit
 * first: the first timestamp as a zig-zag varint and the first value as 64 raw bits; the second
 * timestamp as an unsigned varint delta and the value XOR-encoded; every later timestamp as a
 * delta-of-delta in one of five buckets ({@code 0}, {@code 10}+14 bits, {@code 110}+17,
 * {@code 1110}+20, {@code 1111}+64) and the value XOR-encoded against the previous one (a 0 bit
 * for an equal value; otherwise 1 then either {@code 0} and the meaningful bits inside the
 * previous leading/trailing-zero window, or {@code 1}, 5 bits of leading zeros, 6 bits of
 * significant-bit count (0 meaning 64) and the bits).
 *
 * <p>Not thread-safe: a series appends under its own lock. {@link #bytes()} returns a copy, which
 * readers may decode while appends continue.
 */
public final class XorAppender {
  /** Prometheus clamps leading zeros to 31 so they fit in 5 bits. */
  private static final int MAX_LEADING = 31;

  private byte[] buf;
  /** Bits written, including the 16-bit header. */
  private long bitLen = 16;

  private int numSamples;
  private long t;
  private double v;
  private long tDelta;
  private int leading = 0xff;
  private int trailing;
  private long minTime;

  public XorAppender() {
    this(32);
  }

  public XorAppender(int initialBytes) {
    buf = new byte[Math.max(initialBytes, 4)];
  }

  public int numSamples() {
    return numSamples;
  }

  public long minTime() {
    return minTime;
  }

  public long maxTime() {
    return t;
  }

  public double lastValue() {
    return v;
  }

  /** Bytes the encoded chunk occupies so far. */
  public int sizeBytes() {
    return (int) ((bitLen + 7) >>> 3);
  }

  /** Capacity of the internal buffer (for memory accounting). */
  public int capacityBytes() {
    return buf.length;
  }

  /** Appends a sample; timestamps must be increasing (the caller checks order). */
  public void append(long ts, double value) {
    if (numSamples == 0) {
      writeVarint(ts);
      writeBits(Double.doubleToRawLongBits(value), 64);
      minTime = ts;
    } else if (numSamples == 1) {
      long delta = ts - t;
      writeUvarint(delta);
      writeValue(value);
      tDelta = delta;
    } else {
      long delta = ts - t;
      long dod = delta - tDelta;
      if (dod == 0) {
        writeBit(false);
      } else if (bitRange(dod, 14)) {
        writeBits(0b10, 2);
        writeBits(dod, 14);
      } else if (bitRange(dod, 17)) {
        writeBits(0b110, 3);
        writeBits(dod, 17);
      } else if (bitRange(dod, 20)) {
        writeBits(0b1110, 4);
        writeBits(dod, 20);
      } else {
        writeBits(0b1111, 4);
        writeBits(dod, 64);
      }
      writeValue(value);
      tDelta = delta;
    }
    t = ts;
    v = value;
    numSamples++;
    buf[0] = (byte) (numSamples >>> 8);
    buf[1] = (byte) numSamples;
  }

  /** A copy of the encoded chunk as it is now, exactly {@link #sizeBytes()} long. */
  public byte[] bytes() {
    return Arrays.copyOf(buf, sizeBytes());
  }

  static boolean bitRange(long x, int nbits) {
    return -((1L << (nbits - 1)) - 1) <= x && x <= (1L << (nbits - 1));
  }

  private void writeValue(double value) {
    long delta = Double.doubleToRawLongBits(value) ^ Double.doubleToRawLongBits(v);
    if (delta == 0) {
      writeBit(false);
      return;
    }
    writeBit(true);
    int newLeading = Math.min(Long.numberOfLeadingZeros(delta), MAX_LEADING);
    int newTrailing = Long.numberOfTrailingZeros(delta);
    if (leading != 0xff && newLeading >= leading && newTrailing >= trailing) {
      writeBit(false);
      writeBits(delta >>> trailing, 64 - leading - trailing);
      return;
    }
    leading = newLeading;
    trailing = newTrailing;
    writeBit(true);
    writeBits(newLeading, 5);
    int sigbits = 64 - newLeading - newTrailing;
    // 64 significant bits are written as 0: 6 bits cannot hold 64, and 0 never occurs otherwise.
    writeBits(sigbits & 0x3f, 6);
    writeBits(delta >>> newTrailing, sigbits);
  }

  private void writeVarint(long x) {
    writeUvarint((x << 1) ^ (x >> 63));
  }

  private void writeUvarint(long x) {
    while ((x & ~0x7FL) != 0) {
      writeBits((x & 0x7F) | 0x80, 8);
      x >>>= 7;
    }
    writeBits(x, 8);
  }

  private void writeBit(boolean bit) {
    ensure(1);
    if (bit) {
      int idx = (int) (bitLen >>> 3);
      buf[idx] |= (byte) (0x80 >>> (bitLen & 7));
    }
    bitLen++;
  }

  /** Writes the low {@code n} bits of {@code bits}, most significant first. */
  private void writeBits(long bits, int n) {
    ensure(n);
    while (n > 0) {
      int idx = (int) (bitLen >>> 3);
      int free = 8 - (int) (bitLen & 7);
      int take = Math.min(free, n);
      int chunk = (int) ((bits >>> (n - take)) & ((1 << take) - 1));
      buf[idx] |= (byte) (chunk << (free - take));
      bitLen += take;
      n -= take;
    }
  }

  private void ensure(int moreBits) {
    long needBytes = (bitLen + moreBits + 7) >>> 3;
    if (needBytes > buf.length) {
      buf = Arrays.copyOf(buf, (int) Math.max(needBytes, buf.length + (buf.length >> 1)));
    }
  }
}
