package dev.weir.storage.tsdb.chunk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link BitWriter#writeBits} against a one-bit-at-a-time reference, at every alignment and width. */
class BitWriterTest {
  /** The reference: bit by bit, most significant first, ignoring bits above {@code n}. */
  private static void reference(boolean[] out, int[] len, long bits, int n) {
    for (int i = n - 1; i >= 0; i--) {
      out[len[0]++] = ((bits >>> i) & 1) != 0;
    }
  }

  private static byte[] pack(boolean[] bits, int len, int headerBytes) {
    byte[] b = new byte[headerBytes + (len + 7) / 8];
    for (int i = 0; i < len; i++) {
      if (bits[i]) {
        b[headerBytes + i / 8] |= (byte) (0x80 >>> (i % 8));
      }
    }
    return b;
  }

  @Test
  void writesTheLowBitsOfAnyWidthAtAnyAlignmentAndIgnoresTheHighOnes() {
    Random rnd = new Random(42);
    for (int round = 0; round < 2_000; round++) {
      int header = rnd.nextInt(3);
      BitWriter w = new BitWriter(header, 1 + rnd.nextInt(4)); // small: it grows while writing
      boolean[] expected = new boolean[64 * 40];
      int[] len = {0};
      int writes = 1 + rnd.nextInt(30);
      for (int i = 0; i < writes; i++) {
        int n = rnd.nextInt(65); // 0..64
        long bits = rnd.nextLong(); // garbage above bit n must not leak
        if (rnd.nextInt(4) == 0) {
          w.writeBit((bits & 1) != 0);
          reference(expected, len, bits & 1, 1);
        } else {
          w.writeBits(bits, n);
          reference(expected, len, bits, n);
        }
      }
      assertThat(w.sizeBytes()).isEqualTo(header + (len[0] + 7) / 8);
      assertThat(w.bytes()).as("round %d", round).isEqualTo(pack(expected, len[0], header));
    }
  }
}
