package dev.weir.storage.tsdb.chunk;

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
public final class XorAppender extends BitWriter {
  /** The previous value and the XOR window: {@link BitWriter.XorState}'s fields, held inline. */
  private double lastValue;
  private int leading = 0xff;
  private int trailing;

  private int numSamples;
  private long t;
  private long tDelta;
  private long minTime;

  public XorAppender() {
    this(32);
  }

  public XorAppender(int initialBytes) {
    super(2, Math.max(initialBytes, 4));
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
    return lastValue;
  }

  /** Bytes the encoded chunk occupies so far. */
  @Override
  public int sizeBytes() {
    return super.sizeBytes();
  }

  /** Capacity of the internal buffer (for memory accounting). */
  @Override
  public int capacityBytes() {
    return super.capacityBytes();
  }

  /** Appends a sample; timestamps must be increasing (the caller checks order). */
  public void append(long ts, double value) {
    if (numSamples == 0) {
      writeVarint(ts);
      writeDouble(value);
      lastValue = value;
      minTime = ts;
    } else if (numSamples == 1) {
      long delta = ts - t;
      writeUvarint(delta);
      writeXor(value);
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
      writeXor(value);
      tDelta = delta;
    }
    t = ts;
    numSamples++;
    setByte(0, numSamples >>> 8);
    setByte(1, numSamples);
  }

  /** A copy of the encoded chunk as it is now, exactly {@link #sizeBytes()} long. */
  @Override
  public byte[] bytes() {
    return super.bytes();
  }

  /** Whether {@code x} fits Prometheus' signed {@code nbits}-bit range (-(2^(n-1)-1) .. 2^(n-1)). */
  static boolean bitRange(long x, int nbits) {
    return -((1L << (nbits - 1)) - 1) <= x && x <= (1L << (nbits - 1));
  }

  private void writeXor(double value) {
    long delta = Double.doubleToRawLongBits(value) ^ Double.doubleToRawLongBits(lastValue);
    lastValue = value;
    int window = writeXorDelta(delta, leading, trailing);
    leading = window >>> 8;
    trailing = window & 0xff;
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
}
