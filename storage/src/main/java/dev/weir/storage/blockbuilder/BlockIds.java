package dev.weir.storage.blockbuilder;

import dev.weir.storage.tsdb.block.Ulid;

/**
 * Deterministic block IDs: a ULID whose time is the timestamp of the cycle's first record and
 * whose 80 bits of entropy are the partition (16 bits), the cycle's start offset (48 bits) and the
 * block range's index (16 bits, the range start ÷ range length, modulo 2^16). A cycle redone from
 * the same offset therefore writes the same IDs and replaces what an unfinished attempt uploaded;
 * the ID alone tells which partition and offset made a block.
 */
public final class BlockIds {
  private BlockIds() {}

  public static String of(long firstRecordTimestamp, int partition, long startOffset, long rangeIndex) {
    if (partition < 0 || partition > 0xffff) {
      throw new IllegalArgumentException("partition out of range for a block ID: " + partition);
    }
    if (startOffset < 0 || startOffset >= (1L << 48)) {
      throw new IllegalArgumentException("offset out of range for a block ID: " + startOffset);
    }
    byte[] e = new byte[10];
    e[0] = (byte) (partition >>> 8);
    e[1] = (byte) partition;
    for (int i = 0; i < 6; i++) {
      e[2 + i] = (byte) (startOffset >>> (8 * (5 - i)));
    }
    e[8] = (byte) (rangeIndex >>> 8);
    e[9] = (byte) rangeIndex;
    return Ulid.of(Math.max(0, firstRecordTimestamp), e);
  }

  public static int partition(String id) {
    byte[] b = Ulid.bytes(id);
    return ((b[6] & 0xff) << 8) | (b[7] & 0xff);
  }

  /** The timestamp of the first record of the cycle that made the block (the ULID's time). */
  public static long firstRecordTimestamp(String id) {
    byte[] b = Ulid.bytes(id);
    long t = 0;
    for (int i = 0; i < 6; i++) {
      t = (t << 8) | (b[i] & 0xff);
    }
    return t;
  }

  public static long startOffset(String id) {
    byte[] b = Ulid.bytes(id);
    long o = 0;
    for (int i = 0; i < 6; i++) {
      o = (o << 8) | (b[8 + i] & 0xff);
    }
    return o;
  }
}
