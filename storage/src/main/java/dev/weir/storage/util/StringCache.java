package dev.weir.storage.util;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Decodes UTF-8 strings through a direct-mapped cache of the last string seen per slot, so a
 * reader that decodes the same label names and values over and over (a WAL replay: every series
 * record repeats {@code __name__}, {@code job}, its cluster...) returns one String for them instead
 * of allocating a new one each time. A string that differs from its slot's replaces it; strings
 * longer than {@value #MAX_CACHED_BYTES} bytes are decoded without the cache. Bound: the slots
 * given at construction, each holding at most one string of at most that length (and its bytes).
 *
 * <p>Not thread-safe: one per reading thread.
 */
public final class StringCache {
  static final int MAX_CACHED_BYTES = 128;

  private final byte[][] keys;
  private final String[] values;
  private final int shift;
  private final byte[] scratch = new byte[MAX_CACHED_BYTES];

  /** @param slots rounded up to a power of two */
  public StringCache(int slots) {
    int n = Integer.highestOneBit(Math.max(2, slots - 1)) << 1;
    keys = new byte[n][];
    values = new String[n];
    shift = 32 - Integer.numberOfTrailingZeros(n);
  }

  /** The string of the next {@code len} bytes of {@code buf} (UTF-8), which it consumes. */
  public String read(ByteBuffer buf, int len) {
    if (len > MAX_CACHED_BYTES) {
      byte[] b = new byte[len];
      buf.get(b);
      return new String(b, StandardCharsets.UTF_8);
    }
    byte[] s = scratch;
    buf.get(s, 0, len);
    int h = 1;
    for (int i = 0; i < len; i++) {
      h = 31 * h + s[i];
    }
    int slot = (h * 0x9E3779B1) >>> shift;
    byte[] k = keys[slot];
    if (k != null && Arrays.equals(k, 0, k.length, s, 0, len)) {
      return values[slot];
    }
    String v = new String(s, 0, len, StandardCharsets.UTF_8);
    keys[slot] = Arrays.copyOf(s, len);
    values[slot] = v;
    return v;
  }
}
