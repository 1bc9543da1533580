package dev.weir.storage.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AsciiHashTest {
  @Test
  void equalsStringHashCodeForEveryLengthAndOffset() {
    SplittableRandom r = new SplittableRandom(7);
    for (int len = 0; len <= 70; len++) {
      for (int round = 0; round < 20; round++) {
        byte[] b = new byte[len + 5];
        for (int i = 0; i < b.length; i++) {
          b[i] = (byte) r.nextInt(128); // every ASCII byte, NUL and DEL included
        }
        int off = r.nextInt(6);
        int n = Math.min(len, b.length - off);
        String s = new String(b, off, n, StandardCharsets.US_ASCII);
        assertThat(AsciiHash.of(b, off, n)).as("len %d off %d", n, off)
            .isEqualTo(s.hashCode() & 0xffffffffL);
      }
    }
  }

  @Test
  void aByteBeyondAsciiAnywhereGivesMinusOne() {
    byte[] b = "http_requests_total{code}".getBytes(StandardCharsets.US_ASCII);
    for (int at = 0; at < b.length; at++) {
      byte[] c = b.clone();
      c[at] = (byte) 0xc3;
      assertThat(AsciiHash.of(c, 0, c.length)).as("at %d", at).isEqualTo(-1);
      assertThat(AsciiHash.of(c, 0, at)).as("before it").isEqualTo(new String(c, 0, at, StandardCharsets.US_ASCII)
          .hashCode() & 0xffffffffL);
    }
    assertThat(AsciiHash.of("ü".getBytes(StandardCharsets.UTF_8), 0, 2)).isEqualTo(-1);
  }
}
