package dev.weir.storage.tsdb.chunk;

/**
 * Decodes a chunk written by {@link XorAppender} (or by Prometheus). Usage:
 *
 * <pre>{@code
 * XorIterator it = new XorIterator(bytes);
 * while (it.next()) {
 *   use(it.timestamp(), it.value());
 * }
 * }</pre>
 *
 * <p>Not thread-safe. A malformed chunk raises {@link IllegalStateException} from {@link #next()}.
 */
public final class XorIterator implements ChunkIterator {
  private final byte[] buf;
  private final int total;
  private long bitPos = 16;
  private int read;

  private long t;
  private double v;
  private long tDelta;
  private int leading;
  private int trailing;

  public XorIterator(byte[] chunk) {
    if (chunk.length < 2) {
      throw new IllegalStateException("chunk shorter than its header");
    }
    this.buf = chunk;
    this.total = ((chunk[0] & 0xff) << 8) | (chunk[1] & 0xff);
  }

  /** Number of samples the chunk header declares. */
  public static int numSamples(byte[] chunk) {
    return ((chunk[0] & 0xff) << 8) | (chunk[1] & 0xff);
  }

  @Override
  public int numSamples() {
    return total;
  }

  @Override
  public long timestamp() {
    return t;
  }

  public double value() {
    return v;
  }

  /** Advances to the next sample; false at the end. */
  @Override
  public boolean next() {
    if (read >= total) {
      return false;
    }
    if (read == 0) {
      t = readVarint();
      v = Double.longBitsToDouble(readBits(64));
    } else if (read == 1) {
      tDelta = readUvarint();
      t += tDelta;
      readValue();
    } else {
      int prefix = 0;
      for (int i = 0; i < 4; i++) {
        prefix <<= 1;
        if (!readBit()) {
          break;
        }
        prefix |= 1;
      }
      long dod;
      switch (prefix) {
        case 0x00 -> dod = 0;
        case 0x02 -> dod = signExtend(readBits(14), 14);
        case 0x06 -> dod = signExtend(readBits(17), 17);
        case 0x0e -> dod = signExtend(readBits(20), 20);
        case 0x0f -> dod = readBits(64);
        default -> throw new IllegalStateException("bad delta-of-delta prefix " + prefix);
      }
      tDelta += dod;
      t += tDelta;
      readValue();
    }
    read++;
    return true;
  }

  private static long signExtend(long bits, int n) {
    return bits > (1L << (n - 1)) ? bits - (1L << n) : bits;
  }

  private void readValue() {
    if (!readBit()) {
      return;
    }
    if (readBit()) {
      leading = (int) readBits(5);
      int sigbits = (int) readBits(6);
      if (sigbits == 0) {
        sigbits = 64;
      }
      trailing = 64 - leading - sigbits;
    }
    int sigbits = 64 - leading - trailing;
    long bits = readBits(sigbits);
    long vbits = Double.doubleToRawLongBits(v) ^ (bits << trailing);
    v = Double.longBitsToDouble(vbits);
  }

  private long readVarint() {
    long ux = readUvarint();
    return (ux >>> 1) ^ -(ux & 1);
  }

  private long readUvarint() {
    long x = 0;
    int shift = 0;
    for (int i = 0; i < 10; i++) {
      long b = readBits(8);
      x |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return x;
      }
      shift += 7;
    }
    throw new IllegalStateException("varint overflow");
  }

  private boolean readBit() {
    int idx = (int) (bitPos >>> 3);
    if (idx >= buf.length) {
      throw new IllegalStateException("chunk truncated");
    }
    boolean bit = (buf[idx] & (0x80 >>> (bitPos & 7))) != 0;
    bitPos++;
    return bit;
  }

  private long readBits(int n) {
    if (bitPos + n > (long) buf.length * 8) {
      throw new IllegalStateException("chunk truncated");
    }
    long out = 0;
    while (n > 0) {
      int idx = (int) (bitPos >>> 3);
      int avail = 8 - (int) (bitPos & 7);
      int take = Math.min(avail, n);
      int b = (buf[idx] & 0xff) >>> (avail - take);
      out = (out << take) | (b & ((1 << take) - 1));
      bitPos += take;
      n -= take;
    }
    return out;
  }
}
