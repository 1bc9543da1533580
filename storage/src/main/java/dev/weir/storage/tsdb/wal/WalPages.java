package dev.weir.storage.tsdb.wal;

import dev.weir.storage.util.ByteSink;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Prometheus' WAL framing ({@code tsdb/wlog}): a segment is a sequence of 32 KiB pages; a record
 * is stored as one or more fragments, none crossing a page, each with a 7-byte header
 *
 * <pre>
 * type (1 byte: 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST; bit 3 = snappy-compressed) |
 * length (2 bytes BE) | CRC32 Castagnoli of the fragment's data (4 bytes BE) | data
 * </pre>
 *
 * A page with fewer bytes left than a header plus one data byte is padded with zeros (a zero type
 * byte means "the rest of this page is zeros"). A segment may end in the middle of a page (the
 * writer appends after it, or the next segment starts a new page): readers treat a short page as
 * padded, as Prometheus' does. Weir never compresses; a compressed fragment reads as damage.
 *
 * <p>Writers hand {@link Wal#append} and checkpoints a <em>logical</em> stream, built with
 * {@link WalRecords#begin}/{@link WalRecords#end}: {@code length (4 bytes BE) | payload} per record.
 * {@link #frame} turns it into fragments for a given position in the segment, so the paging
 * depends only on where the batch lands.
 *
 * <p>Stateless.
 */
public final class WalPages {
  /** Prometheus' page size; a reader relies on it to find the padding. */
  public static final int PAGE_BYTES = 32 * 1024;
  /** Fragment header: type, length, CRC. */
  public static final int HEADER_BYTES = 7;
  static final int FULL = 1;
  static final int FIRST = 2;
  static final int MIDDLE = 3;
  static final int LAST = 4;
  /** Low 3 bits of the type byte: the fragment type; the rest are flags (snappy, zstd). */
  static final int TYPE_MASK = 0x07;
  /** Bytes of the logical stream's per-record prefix (the payload length). */
  static final int LOGICAL_PREFIX_BYTES = 4;

  private WalPages() {}

  /**
   * Frames the logical records of {@code logical} as fragments written at byte {@code pos} of a
   * segment, appending them (and any page padding they need) to {@code out}.
   *
   * @return the bytes appended to {@code out}
   */
  public static int frame(ByteSink logical, long pos, ByteSink out) {
    int before = out.length();
    byte[] src = logical.array();
    int end = logical.length();
    int off = 0;
    long p = pos;
    CRC32C crc = new CRC32C();
    while (off < end) {
      int len = ((src[off] & 0xff) << 24) | ((src[off + 1] & 0xff) << 16) | ((src[off + 2] & 0xff) << 8)
          | (src[off + 3] & 0xff);
      off += LOGICAL_PREFIX_BYTES;
      int left = len;
      boolean first = true;
      do {
        int inPage = (int) (p % PAGE_BYTES);
        if (PAGE_BYTES - inPage <= HEADER_BYTES && inPage != 0) {
          int pad = PAGE_BYTES - inPage;
          for (int i = 0; i < pad; i++) {
            out.put(0);
          }
          p += pad;
          inPage = 0;
        }
        int n = Math.min(left, PAGE_BYTES - inPage - HEADER_BYTES);
        int type = first ? (n == left ? FULL : FIRST) : (n == left ? LAST : MIDDLE);
        crc.reset();
        crc.update(src, off, n);
        out.put(type).put((n >>> 8) & 0xff).put(n & 0xff).putBe32((int) crc.getValue());
        out.put(src, off, n);
        off += n;
        left -= n;
        p += HEADER_BYTES + n;
        first = false;
      } while (left > 0);
    }
    return out.length() - before;
  }

  /**
   * Reads the records of one segment (mapped or on the heap), in order. {@link #next} returns
   * each record's payload; at the end it returns null and {@link #damage()} says whether the
   * segment ended cleanly or where and why reading stopped.
   *
   * <p>Not thread-safe.
   */
  public static final class Reader {
    private final ByteBuffer buf;
    private final int limit;
    private int pos;
    private int recordStart = -1;
    private int damageAt = -1;
    private String damage = "";
    private final ByteSink assembled = new ByteSink(1 << 12);
    private final CRC32C crc = new CRC32C();
    private final byte[] scratch = new byte[PAGE_BYTES];

    public Reader(ByteBuffer buf, int from, int limit) {
      this.buf = buf;
      this.pos = from;
      this.limit = limit;
    }

    /** Where the last record returned (or the damaged one) starts. */
    public int recordStart() {
      return recordStart;
    }

    /** The position after the last record returned. */
    public int position() {
      return pos;
    }

    /** Where reading stopped on damage (the damaged record's first fragment), or -1. */
    public int damageAt() {
      return damageAt;
    }

    /** What is wrong at {@link #damageAt()}. */
    public String damage() {
      return damage;
    }

    /**
     * The next record's payload (valid until the next call), or null at the end of the segment
     * or at damage ({@link #damageAt()} >= 0).
     */
    public @Nullable ByteBuffer next() {
      if (damageAt >= 0) {
        return null;
      }
      assembled.reset();
      recordStart = -1;
      boolean inRecord = false;
      while (true) {
        if (!skipPadding()) {
          return null;
        }
        if (pos >= limit) {
          if (inRecord) {
            return fail(recordStart, "record cut off at the end of the segment (no LAST fragment)");
          }
          return null;
        }
        int at = pos;
        if (!inRecord) {
          recordStart = at;
        }
        int typeByte = buf.get(at) & 0xff;
        int type = typeByte & TYPE_MASK;
        if (typeByte != type) {
          return fail(recordStart, String.format("unsupported fragment flags 0x%02x at offset %d (compressed?)",
              typeByte & ~TYPE_MASK, at));
        }
        if (type > LAST) {
          return fail(recordStart, "unknown fragment type " + type + " at offset " + at);
        }
        int pageLeft = PAGE_BYTES - at % PAGE_BYTES;
        if (limit - at < HEADER_BYTES) {
          return fail(recordStart, "fragment header cut off at offset " + at + " (" + (limit - at) + " bytes left)");
        }
        int len = ((buf.get(at + 1) & 0xff) << 8) | (buf.get(at + 2) & 0xff);
        if (HEADER_BYTES + len > pageLeft) {
          return fail(recordStart, "fragment length " + len + " at offset " + at + " crosses the page end");
        }
        if (at + HEADER_BYTES + len > limit) {
          return fail(recordStart, "fragment cut off at offset " + at + ": needs " + len + " bytes, "
              + (limit - at - HEADER_BYTES) + " left");
        }
        ByteBuffer data = buf.duplicate();
        data.limit(at + HEADER_BYTES + len).position(at + HEADER_BYTES);
        crc.reset();
        crc.update(data.duplicate());
        if ((int) crc.getValue() != buf.getInt(at + 3)) {
          return fail(recordStart, "checksum mismatch in fragment at offset " + at);
        }
        boolean starts = type == FULL || type == FIRST;
        if (starts == inRecord) {
          return fail(recordStart, (inRecord ? "record start" : "continuation") + " fragment (type " + type
              + ") out of sequence at offset " + at);
        }
        pos = at + HEADER_BYTES + len;
        if (type == FULL) {
          return data.slice();
        }
        if ((long) assembled.length() + len > WalRecords.MAX_RECORD_BYTES) {
          return fail(recordStart, "record longer than " + WalRecords.MAX_RECORD_BYTES + " bytes");
        }
        data.get(scratch, 0, len);
        assembled.put(scratch, 0, len);
        inRecord = true;
        if (type == LAST) {
          return assembled.asBuffer();
        }
      }
    }

    /** Skips page padding at the position; false (with damage) when the padding is not all zeros. */
    private boolean skipPadding() {
      while (pos < limit && buf.get(pos) == 0) {
        int pageEnd = Math.min(limit, pos - pos % PAGE_BYTES + PAGE_BYTES);
        for (int i = pos; i < pageEnd; i++) {
          if (buf.get(i) != 0) {
            fail(recordStart >= 0 ? recordStart : pos, "non-zero byte in page padding at offset " + i);
            return false;
          }
        }
        pos = pageEnd;
      }
      return true;
    }

    private @Nullable ByteBuffer fail(int at, String what) {
      damageAt = at;
      damage = what;
      return null;
    }
  }
}
