package dev.weir.storage.tsdb.chunk;

/**
 * Appends float samples to a chunk in Prometheus' XOR encoding ({@code chunkenc.EncXOR}, see
 * {@link XorChunkBase} for the layout), so the bytes can be written unchanged into a Prometheus
 * block or sent in a remote-read response: the encoder as an object of its own, for chunks built
 * outside a head series (blocks, out-of-order chunks, tests).
 *
 * <p>Not thread-safe. {@link #bytes()} returns a copy, which readers may decode while appends
 * continue.
 */
public final class XorAppender extends XorChunkBase {
  public XorAppender() {
    this(32);
  }

  public XorAppender(int initialBytes) {
    super(initialBytes);
  }

  public int numSamples() {
    return xorSamples();
  }

  public long minTime() {
    return xorMinTime();
  }

  public long maxTime() {
    return lastTime;
  }

  public double lastValue() {
    return Double.longBitsToDouble(lastBits);
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
    xorAppend(ts, value);
  }

  /** A copy of the encoded chunk as it is now, exactly {@link #sizeBytes()} long. */
  @Override
  public byte[] bytes() {
    return super.bytes();
  }
}
