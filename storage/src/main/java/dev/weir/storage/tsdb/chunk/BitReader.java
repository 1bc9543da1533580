package dev.weir.storage.tsdb.chunk;

/**
 * Reads what {@link BitWriter} writes: bits most significant first, varbit integers and XOR-coded
 * floats. Running past the end, or a bad prefix, raises {@link IllegalStateException} naming the
 * problem. Not thread-safe.
 */
final class BitReader {
  private final byte[] buf;
  private long bitPos;

  BitReader(byte[] buf, int startByte) {
    this.buf = buf;
    this.bitPos = 8L * startByte;
  }

  boolean readBit() {
    int idx = (int) (bitPos >>> 3);
    if (idx >= buf.length) {
      throw new IllegalStateException("chunk truncated");
    }
    boolean bit = (buf[idx] & (0x80 >>> (bitPos & 7))) != 0;
    bitPos++;
    return bit;
  }

  long readBits(int n) {
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

  int readByte() {
    return (int) readBits(8);
  }

  double readDouble() {
    return Double.longBitsToDouble(readBits(64));
  }

  /** Width in bits chosen by a varbit prefix; -1 for the value 0, 64 for the raw form. */
  private int varbitWidth() {
    int ones = 0;
    while (ones < 8 && readBit()) {
      ones++;
    }
    return switch (ones) {
      case 0 -> -1;
      case 1 -> 3;
      case 2 -> 6;
      case 3 -> 9;
      case 4 -> 12;
      case 5 -> 18;
      case 6 -> 25;
      case 7 -> 56;
      default -> 64;
    };
  }

  long readVarbitInt() {
    int width = varbitWidth();
    if (width < 0) {
      return 0;
    }
    long bits = readBits(width);
    if (width < 64 && bits > (1L << (width - 1))) {
      bits -= 1L << width;
    }
    return bits;
  }

  long readVarbitUint() {
    int width = varbitWidth();
    return width < 0 ? 0 : readBits(width);
  }

  /** Decodes one XOR-coded value into {@code state} (Prometheus' {@code xorRead}). */
  void readXor(BitWriter.XorState state) {
    if (!readBit()) {
      return;
    }
    if (readBit()) {
      state.leading = (int) readBits(5);
      int sigbits = (int) readBits(6);
      if (sigbits == 0) {
        sigbits = 64;
      }
      state.trailing = 64 - state.leading - sigbits;
    }
    int sigbits = 64 - state.leading - state.trailing;
    if (sigbits <= 0 || sigbits > 64) {
      throw new IllegalStateException("XOR value reuses a window it never set");
    }
    long bits = readBits(sigbits);
    state.value = Double.longBitsToDouble(Double.doubleToRawLongBits(state.value) ^ (bits << state.trailing));
  }
}
