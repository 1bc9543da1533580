package dev.weir.storage.tsdb.chunk;

/**
 * Appends float samples to a chunk in Prometheus' XOR encoding ({@code chunkenc.EncXOR}), as a
 * base class: a head series extends it, so the chunk it appends to is fields of the series, not an
 * object of its own (an appender per series was 72 bytes and one more object to reach on every
 * append). {@link XorAppender} is the same encoder as an object of its own.
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
 * <p>{@link #lastTime} and {@link #lastBits}, the newest sample appended, are the subclass's too:
 * a series keeps its newest sample there whatever chunk holds it. The encoder reads them only
 * while its chunk holds samples, and every append sets them.
 *
 * <p>Not thread-safe: the subclass guards it.
 */
public abstract class XorChunkBase extends BitWriter {
  private static final int INITIAL_BYTES = 32;
  /** The most samples a chunk holds: its count is two bytes (Prometheus' uint16). */
  public static final int MAX_SAMPLES = 0xffff;

  /** The newest sample's time; {@code Long.MIN_VALUE} before any. */
  protected long lastTime = Long.MIN_VALUE;
  /** The newest sample's value bits ({@link Double#doubleToRawLongBits}). */
  protected long lastBits;
  private long tDelta;
  /** The XOR window: leading zeros (0xff: none yet) and trailing zeros, as unsigned bytes. */
  private byte leading = (byte) 0xff;
  private byte trailing;

  /** No chunk and no buffer until the first append. */
  protected XorChunkBase() {}

  XorChunkBase(int initialBytes) {
    super(2, Math.max(initialBytes, 4));
  }

  /**
   * Samples in the chunk: its 2-byte header, the only count kept (a head series is 4 bytes
   * smaller without a field for it); 0 without a buffer.
   */
  protected final int xorSamples() {
    return capacityBytes() == 0 ? 0 : getByte(0) << 8 | getByte(1);
  }

  /**
   * The chunk's oldest sample time (its newest is {@link #lastTime}); only with samples. Read from
   * the chunk's first timestamp (a zig-zag varint after the header) rather than kept in a field:
   * only lookups and queries ask, appends do not.
   */
  protected final long xorMinTime() {
    long u = uvarintAt(2);
    return (u >>> 1) ^ -(u & 1);
  }

  /** Bytes the encoded chunk occupies so far. */
  protected final int xorSize() {
    return xorSamples() == 0 ? 0 : sizeBytes();
  }

  /** The buffer's capacity (memory accounting); 0 after {@link #xorRelease}. */
  protected final int xorCapacity() {
    return capacityBytes();
  }

  /** A copy of the encoded chunk as it is now, exactly {@link #xorSize()} long. */
  protected final byte[] xorBytes() {
    return xorSamples() == 0 ? new byte[] {0, 0} : bytes();
  }

  /** Reads the byte the next append writes to, without the subclass's lock (see {@link BitWriter#touch}). */
  protected final int xorTouch() {
    return touch();
  }

  /** Ends the chunk (its bytes were taken) and drops its buffer; the next append starts a new one. */
  protected final void xorRelease() {
    release();
  }

  /** Appends a sample; timestamps must be increasing (the caller checks order). */
  protected final void xorAppend(long ts, double value) {
    long bits = Double.doubleToRawLongBits(value);
    int n = xorSamples();
    if (n == 0) {
      restart(2, INITIAL_BYTES);
      leading = (byte) 0xff;
      trailing = 0;
      writeVarint(ts);
      writeBits(bits, 64);
    } else if (n == 1) {
      long delta = ts - lastTime;
      writeUvarint(delta);
      writeXor(bits);
      tDelta = delta;
    } else {
      if (n == MAX_SAMPLES) {
        throw new IllegalStateException("a chunk holds at most " + MAX_SAMPLES + " samples (its 2-byte count)");
      }
      long delta = ts - lastTime;
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
      writeXor(bits);
      tDelta = delta;
    }
    lastTime = ts;
    lastBits = bits;
    n++;
    setByte(0, n >>> 8);
    setByte(1, n);
  }

  /** Whether {@code x} fits Prometheus' signed {@code nbits}-bit range (-(2^(n-1)-1) .. 2^(n-1)). */
  static boolean bitRange(long x, int nbits) {
    return -((1L << (nbits - 1)) - 1) <= x && x <= (1L << (nbits - 1));
  }

  private void writeXor(long bits) {
    int window = writeXorDelta(bits ^ lastBits, leading & 0xff, trailing);
    leading = (byte) (window >>> 8);
    trailing = (byte) window;
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
