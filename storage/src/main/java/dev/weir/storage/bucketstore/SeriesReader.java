package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Reads series entries of a block's index by range: a series' ID is its offset / 16, and its
 * length is not known before it is read, so each is read with an estimate of its size (reads of
 * neighbouring series merge) and read again, exactly, in the rare case it is longer. Every entry's
 * checksum is verified. Stateless.
 */
final class SeriesReader {
  /** Bytes read per series before its length is known: Mimir's estimate of a p99 series entry. */
  static final int SERIES_ESTIMATE = 512;

  /** A chunk of a series: its inclusive time range and its reference in the chunk files. */
  record ChunkRef(long minTime, long maxTime, long ref) {}

  /** A decoded series entry. */
  record Entry(int ref, Labels labels, List<ChunkRef> chunks) {}

  private SeriesReader() {}

  /** The entries of {@code refs} (ascending), in that order. */
  static List<Entry> read(IndexHeader header, RangeReads.FileReader index, int[] refs) throws IOException {
    long end = header.seriesEnd();
    List<RangeReads.Range> ranges = new ArrayList<>(refs.length);
    for (int ref : refs) {
      long start = 16L * ref;
      if (start < header.toc().series() || start >= end) {
        throw new IOException("series reference " + ref + " outside the series section");
      }
      ranges.add(new RangeReads.Range(start, Math.min(end, start + SERIES_ESTIMATE)));
    }
    ByteBuffer[] bufs = RangeReads.read(index, ranges, BucketBlock.INDEX_MAX_GAP, BucketBlock.MAX_READ,
        QueryBudget.UNLIMITED);
    List<Entry> out = new ArrayList<>(refs.length);
    for (int i = 0; i < refs.length; i++) {
      Entry e = decode(header, refs[i], bufs[i]);
      if (e == null) {
        ByteBuffer exact = ByteBuffer.wrap(index.read(16L * refs[i], Math.toIntExact(entryBytes(bufs[i]))));
        e = decode(header, refs[i], exact);
        if (e == null) {
          throw new IOException("series " + refs[i] + " is truncated");
        }
      }
      out.add(e);
    }
    return out;
  }

  /** The whole entry's size (length prefix, content, CRC), from its length prefix. */
  private static long entryBytes(ByteBuffer b) throws IOException {
    try {
      long len = new ByteSource(b.duplicate()).uvarint();
      return ByteSink.uvarintSize(len) + len + 4;
    } catch (BufferUnderflowException | IllegalStateException e) {
      throw new IOException("series entry length is unreadable", e);
    }
  }

  /** The entry at the buffer's start, or null when the buffer ends before it does. */
  private static @Nullable Entry decode(IndexHeader header, int ref, ByteBuffer b) throws IOException {
    try {
      ByteSource in = new ByteSource(b.duplicate());
      long len = in.uvarint();
      int contentAt = in.position();
      if (in.remaining() < len + 4) {
        return null;
      }
      CRC32C crc = new CRC32C();
      crc.update(b.duplicate().position(contentAt).limit(contentAt + (int) len));
      if ((int) crc.getValue() != b.getInt(contentAt + (int) len)) {
        throw new IOException("series " + ref + " checksum mismatch");
      }
      return decodeContent(header, ref, in);
    } catch (BufferUnderflowException | IllegalStateException | IndexOutOfBoundsException e) {
      throw new IOException("series " + ref + " is malformed: " + e, e);
    }
  }

  private static Entry decodeContent(IndexHeader header, int ref, ByteSource in) throws IOException {
    int nLabels = (int) in.uvarint();
    String[] pairs = new String[nLabels * 2];
    for (int i = 0; i < pairs.length; i++) {
      pairs[i] = header.symbol(in.uvarint());
    }
    int nChunks = (int) in.uvarint();
    List<ChunkRef> chunks = new ArrayList<>(nChunks);
    if (nChunks > 0) {
      long mint = in.varint();
      long maxt = mint + in.uvarint();
      long cref = in.uvarint();
      chunks.add(new ChunkRef(mint, maxt, cref));
      for (int i = 1; i < nChunks; i++) {
        mint = maxt + in.uvarint();
        maxt = mint + in.uvarint();
        cref += in.varint();
        chunks.add(new ChunkRef(mint, maxt, cref));
      }
    }
    return new Entry(ref, Labels.ofSortedPairs(pairs), chunks);
  }
}
