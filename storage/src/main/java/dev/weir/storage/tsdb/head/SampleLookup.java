package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.XorIterator;

/** Finds a sample by timestamp in an XOR chunk, for the duplicate checks. Stateless. */
final class SampleLookup {
  /** No sample at the timestamp. */
  static final int ABSENT = 0;
  /** A sample at the timestamp with the same value bits. */
  static final int SAME = 1;
  /** A sample at the timestamp with another value. */
  static final int DIFFERENT = 2;

  private SampleLookup() {}

  /** {@link #ABSENT}, {@link #SAME} or {@link #DIFFERENT} for timestamp {@code t} in a sorted chunk. */
  static int inChunk(byte[] chunk, long t, long valueBits) {
    XorIterator it = new XorIterator(chunk);
    while (it.next()) {
      if (it.timestamp() == t) {
        return Double.doubleToRawLongBits(it.value()) == valueBits ? SAME : DIFFERENT;
      }
      if (it.timestamp() > t) {
        return ABSENT;
      }
    }
    return ABSENT;
  }
}
