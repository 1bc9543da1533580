package dev.weir.storage.tsdb.block;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Utf8Order;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.zip.CRC32C;

/**
 * Writes a block {@code index} in Prometheus' index format version 2: header, symbol table,
 * series (each 16-byte aligned; a series' ID is its offset / 16), postings lists (4-byte
 * aligned, the all-series list under the empty name and value first), the postings offset table
 * and the table of contents. Label index sections are not written (Prometheus stopped reading
 * them with format 2); the TOC points the label-indices table at the postings offset table as
 * Prometheus' own writer does. Every section's CRC32C covers the bytes after its length.
 *
 * <p>Stateless; {@link #write} builds one file.
 */
final class IndexWriter {
  static final int MAGIC = 0xBAAAD700;
  static final int FORMAT_V2 = 2;
  static final int TOC_BYTES = 6 * 8 + 4;

  /** A chunk's time range (inclusive) and reference in the chunk files. */
  record ChunkMeta(long minTime, long maxTime, long ref) {}

  /** A series and its chunks, in time order. */
  record SeriesEntry(Labels labels, List<ChunkMeta> chunks) {}

  private IndexWriter() {}

  /** Writes the index of {@code series}, which must be sorted by labels and hold chunks. */
  static void write(Path file, List<SeriesEntry> series) throws IOException {
    TreeSet<String> symbolSet = new TreeSet<>(Utf8Order.COMPARATOR);
    for (SeriesEntry s : series) {
      s.labels().forEach((n, v) -> {
        symbolSet.add(n);
        symbolSet.add(v);
      });
    }
    Map<String, Integer> symbols = new HashMap<>(symbolSet.size() * 2);
    for (String sym : symbolSet) {
      symbols.put(sym, symbols.size());
    }
    try (Out out = new Out(file)) {
      out.sink.putBe32(MAGIC).put(FORMAT_V2);
      long[] toc = new long[6];

      toc[0] = out.pos();
      ByteSink sym = new ByteSink(1 << 16);
      sym.putBe32(0).putBe32(symbolSet.size());
      for (String s : symbolSet) {
        sym.putString(s);
      }
      finishSection(sym);
      out.write(sym);

      toc[1] = out.pos();
      List<Integer> all = new ArrayList<>(series.size());
      TreeMap<String, TreeMap<String, List<Integer>>> postings = new TreeMap<>(Utf8Order.COMPARATOR);
      ByteSink content = new ByteSink(256);
      Labels previous = null;
      for (SeriesEntry s : series) {
        if (previous != null && previous.compareTo(s.labels()) >= 0) {
          throw new IllegalArgumentException("series out of order: " + s.labels() + " after " + previous);
        }
        previous = s.labels();
        out.sink.pad(16); // the buffer starts at a 16-aligned file offset: see Out.write
        long offset = out.pos();
        if (offset % 16 != 0) {
          throw new IllegalStateException("series not 16-byte aligned at " + offset);
        }
        int ref = Math.toIntExact(offset / 16);
        all.add(ref);
        content.reset();
        content.putUvarint(s.labels().size());
        for (int i = 0; i < s.labels().size(); i++) {
          content.putUvarint(symbols.get(s.labels().name(i)));
          content.putUvarint(symbols.get(s.labels().value(i)));
          postings.computeIfAbsent(s.labels().name(i), k -> new TreeMap<>(Utf8Order.COMPARATOR))
              .computeIfAbsent(s.labels().value(i), k -> new ArrayList<>()).add(ref);
        }
        encodeChunks(content, s.chunks());
        out.sink.putUvarint(content.length());
        out.sink.put(content.array(), 0, content.length());
        out.sink.putBe32(crc(content.array(), 0, content.length()));
        out.maybeFlush();
      }

      toc[2] = out.pos(); // label indices: none
      out.sink.pad(4);
      toc[4] = out.pos();
      ByteSink table = new ByteSink(1 << 16);
      table.putBe32(0).putBe32(0);
      int entries = 0;
      entries += writePostings(out, table, "", "", all);
      for (Map.Entry<String, TreeMap<String, List<Integer>>> byName : postings.entrySet()) {
        for (Map.Entry<String, List<Integer>> e : byName.getValue().entrySet()) {
          entries += writePostings(out, table, byName.getKey(), e.getKey(), e.getValue());
        }
      }
      table.setBe32(4, entries);

      toc[3] = out.pos();
      toc[5] = out.pos();
      finishSection(table);
      out.write(table);

      ByteSink t = new ByteSink(TOC_BYTES);
      for (long x : toc) {
        t.putBe64(x);
      }
      t.putBe32(crc(t.array(), 0, 48));
      out.write(t);
    }
  }

  private static void encodeChunks(ByteSink b, List<ChunkMeta> chunks) {
    b.putUvarint(chunks.size());
    if (chunks.isEmpty()) {
      return;
    }
    ChunkMeta c0 = chunks.get(0);
    b.putVarint(c0.minTime());
    b.putUvarint(c0.maxTime() - c0.minTime());
    b.putUvarint(c0.ref());
    long t0 = c0.maxTime();
    long ref0 = c0.ref();
    for (int i = 1; i < chunks.size(); i++) {
      ChunkMeta c = chunks.get(i);
      if (c.minTime() <= t0) {
        throw new IllegalArgumentException("chunk minT " + c.minTime() + " not after previous maxT " + t0);
      }
      b.putUvarint(c.minTime() - t0);
      b.putUvarint(c.maxTime() - c.minTime());
      b.putVarint(c.ref() - ref0);
      t0 = c.maxTime();
      ref0 = c.ref();
    }
  }

  private static int writePostings(Out out, ByteSink table, String name, String value, List<Integer> refs)
      throws IOException {
    out.sink.pad(4);
    long offset = out.pos();
    int start = out.sink.length();
    out.sink.putBe32(4 + 4 * refs.size()).putBe32(refs.size());
    for (int r : refs) {
      out.sink.putBe32(r);
    }
    out.sink.putBe32(crc(out.sink.array(), start + 4, 4 + 4 * refs.size()));
    out.maybeFlush();
    table.putUvarint(2);
    table.putString(name);
    table.putString(value);
    table.putUvarint(offset);
    return 1;
  }

  /** Fills the 4-byte length (bytes after it) and appends the CRC of those bytes. */
  private static void finishSection(ByteSink s) {
    int len = s.length() - 4;
    s.setBe32(0, len);
    s.putBe32(crc(s.array(), 4, len));
  }

  static int crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return (int) c.getValue();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Buffered output that knows its file position. The buffer is flushed only in multiples of 16
   * bytes of file position, so padding computed on the buffer length aligns the file offset.
   */
  private static final class Out implements AutoCloseable {
    private final FileChannel ch;
    final ByteSink sink = new ByteSink(1 << 20);
    private long flushed;

    Out(Path file) throws IOException {
      ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    long pos() {
      return flushed + sink.length();
    }

    void write(ByteSink b) throws IOException {
      sink.put(b.array(), 0, b.length());
      maybeFlush();
    }

    void maybeFlush() throws IOException {
      if (sink.length() >= 1 << 20) {
        int n = sink.length() & ~15;
        ByteBuffer buf = ByteBuffer.wrap(sink.array(), 0, n);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        flushed += n;
        byte[] rest = java.util.Arrays.copyOfRange(sink.array(), n, sink.length());
        sink.reset();
        sink.put(rest);
      }
    }

    @Override
    public void close() throws IOException {
      ByteBuffer buf = sink.asBuffer();
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
      ch.close();
    }
  }
}
