package dev.weir.storage.bucketstore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The table of contents at the end of a Prometheus index (format 2): six big-endian section
 * offsets and the CRC32C of those 48 bytes. Immutable.
 *
 * @param end where the TOC starts (index size − {@link #BYTES}): the end of the last section
 */
record IndexToc(long symbols, long series, long labelIndices, long labelIndicesTable, long postings,
    long postingsTable, long end) {

  /** Six 8-byte offsets and a 4-byte checksum. */
  static final int BYTES = 6 * 8 + 4;

  /** Parses the TOC of an index of {@code indexSize} bytes, verifying its checksum. */
  static IndexToc parse(byte[] toc, long indexSize) throws IOException {
    if (toc.length != BYTES) {
      throw new IOException("index TOC is " + toc.length + " bytes, want " + BYTES);
    }
    CRC32C crc = new CRC32C();
    crc.update(toc, 0, 48);
    ByteBuffer b = ByteBuffer.wrap(toc);
    if ((int) crc.getValue() != b.getInt(48)) {
      throw new IOException("index TOC checksum mismatch");
    }
    long end = indexSize - BYTES;
    IndexToc t = new IndexToc(b.getLong(0), b.getLong(8), b.getLong(16), b.getLong(24), b.getLong(32), b.getLong(40),
        end);
    for (long off : t.offsets()) {
      if (off < 0 || off > end) {
        throw new IOException("index TOC offset " + off + " outside the index (" + indexSize + " bytes)");
      }
    }
    if (t.symbols < 5 || t.series < t.symbols || t.postingsTable < t.series) {
      throw new IOException("index TOC: sections out of order");
    }
    return t;
  }

  /** The six section offsets, ascending, and {@link #end}. */
  long[] boundaries() {
    long[] all = Arrays.copyOf(offsets(), 7);
    all[6] = end;
    Arrays.sort(all);
    return all;
  }

  private long[] offsets() {
    return new long[] {symbols, series, labelIndices, labelIndicesTable, postings, postingsTable};
  }
}
