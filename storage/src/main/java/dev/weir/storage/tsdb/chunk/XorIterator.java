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
  private final BitReader r;
  private final int total;
  private int read;

  private long t;
  private final BitWriter.XorState v = new BitWriter.XorState();
  private long tDelta;

  public XorIterator(byte[] chunk) {
    if (chunk.length < 2) {
      throw new IllegalStateException("chunk shorter than its header");
    }
    this.r = new BitReader(chunk, 2);
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
    return v.value;
  }

  /** Advances to the next sample; false at the end. */
  @Override
  public boolean next() {
    if (read >= total) {
      return false;
    }
    if (read == 0) {
      t = readVarint();
      v.value = r.readDouble();
    } else if (read == 1) {
      tDelta = readUvarint();
      t += tDelta;
      r.readXor(v);
    } else {
      int prefix = 0;
      for (int i = 0; i < 4; i++) {
        prefix <<= 1;
        if (!r.readBit()) {
          break;
        }
        prefix |= 1;
      }
      long dod;
      switch (prefix) {
        case 0x00 -> dod = 0;
        case 0x02 -> dod = signExtend(r.readBits(14), 14);
        case 0x06 -> dod = signExtend(r.readBits(17), 17);
        case 0x0e -> dod = signExtend(r.readBits(20), 20);
        case 0x0f -> dod = r.readBits(64);
        default -> throw new IllegalStateException("bad delta-of-delta prefix " + prefix);
      }
      tDelta += dod;
      t += tDelta;
      r.readXor(v);
    }
    read++;
    return true;
  }

  private static long signExtend(long bits, int n) {
    return bits > (1L << (n - 1)) ? bits - (1L << n) : bits;
  }

  private long readVarint() {
    long ux = readUvarint();
    return (ux >>> 1) ^ -(ux & 1);
  }

  private long readUvarint() {
    long x = 0;
    int shift = 0;
    for (int i = 0; i < 10; i++) {
      long b = r.readBits(8);
      x |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return x;
      }
      shift += 7;
    }
    throw new IllegalStateException("varint overflow");
  }
}
