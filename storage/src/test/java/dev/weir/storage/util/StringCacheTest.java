package dev.weir.storage.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Strings decoded through the cache: equal to a plain decode, repeated ones shared, collisions replaced. */
class StringCacheTest {
  static ByteBuffer direct(String... parts) {
    int n = 0;
    for (String p : parts) {
      n += p.getBytes(StandardCharsets.UTF_8).length;
    }
    ByteBuffer b = ByteBuffer.allocateDirect(n); // WAL segments are memory-mapped: not array-backed
    for (String p : parts) {
      b.put(p.getBytes(StandardCharsets.UTF_8));
    }
    return b.flip();
  }

  @Test
  void everyStringDecodesAsWithoutTheCacheThroughCollisions() {
    StringCache c = new StringCache(4); // few slots: collisions replace entries
    String[] in = new String[200];
    for (int i = 0; i < in.length; i++) {
      in[i] = i % 3 == 0 ? "job" : i % 3 == 1 ? "pod-" + i : "naïve-ünïcode-" + (i % 5);
    }
    ByteBuffer b = direct(in);
    for (String s : in) {
      assertThat(c.read(b, s.getBytes(StandardCharsets.UTF_8).length)).isEqualTo(s);
    }
    assertThat(b.remaining()).isZero();
  }

  @Test
  void theSameStringTwiceInARowIsTheSameObjectUnlessItIsLong() {
    StringCache c = new StringCache(1024);
    String longOne = "x".repeat(StringCache.MAX_CACHED_BYTES + 1);
    ByteBuffer b = direct("__name__", "__name__", longOne, longOne);
    String a = c.read(b, 8);
    assertThat(c.read(b, 8)).isSameAs(a);
    String l1 = c.read(b, longOne.length());
    assertThat(c.read(b, longOne.length())).isEqualTo(l1).isNotSameAs(l1);
    assertThat(c.read(ByteBuffer.allocate(0), 0)).isEmpty();
  }
}
