package dev.weir.ring;

import java.nio.charset.StandardCharsets;

/**
 * The 32-bit ring token of a series: FNV-1a over the tenant and the sorted label pairs (with
 * separators, as Mimir's {@code ShardByAllLabels}), finished with MurmurHash3's fmix32 so that
 * every bit depends on every input bit. Stable across processes and versions: changing it moves
 * series between partitions. Stateless.
 */
public final class SeriesHash {
  private static final int FNV_OFFSET = 0x811c9dc5;
  private static final int FNV_PRIME = 0x01000193;
  private static final byte SEP = (byte) 0xff;

  private SeriesHash() {}

  /** Token of a series given as interleaved, name-sorted pairs. */
  public static int of(String tenant, String[] sortedPairs) {
    int h = add(FNV_OFFSET, tenant);
    h = (h ^ SEP) * FNV_PRIME;
    for (String s : sortedPairs) {
      h = add(h, s);
      h = (h ^ SEP) * FNV_PRIME;
    }
    return fmix32(h);
  }

  /**
   * The hash state after {@code tenant}, to which {@link #add} feeds the sorted label names and
   * values as bytes and {@link #finish} turns into the token: the same token as {@link #of} for
   * the same strings in UTF-8, without building them.
   */
  public static int begin(String tenant) {
    return (add(FNV_OFFSET, tenant) ^ SEP) * FNV_PRIME;
  }

  /** Adds one label name or value, given as its UTF-8 bytes {@code b[off, off+len)}, to {@code h}. */
  public static int add(int h, byte[] b, int off, int len) {
    for (int i = off, end = off + len; i < end; i++) {
      h = (h ^ (b[i] & 0xff)) * FNV_PRIME;
    }
    return (h ^ SEP) * FNV_PRIME;
  }

  /** The token of the state {@link #begin} and {@link #add} built. */
  public static int finish(int h) {
    return fmix32(h);
  }

  private static int add(int h, String s) {
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * FNV_PRIME;
    }
    return h;
  }

  static int fmix32(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }
}
