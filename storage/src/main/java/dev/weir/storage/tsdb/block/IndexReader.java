package dev.weir.storage.tsdb.block;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Utf8Order;
import dev.weir.storage.tsdb.postings.PostingsSource;
import dev.weir.storage.tsdb.postings.Sorted;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Reads a Prometheus index (format 2) through a memory map: the symbol table and postings offset
 * table are loaded at open (checksums verified), postings lists and series are decoded on demand.
 *
 * <p>Thread-safe (reads use duplicates of the mapped buffer).
 */
final class IndexReader implements PostingsSource {
  private final Path file;
  private final MappedByteBuffer map;
  private final String[] symbols;
  private final TreeMap<String, TreeMap<String, Integer>> postings = new TreeMap<>(Utf8Order.COMPARATOR);

  IndexReader(Path file) throws IOException {
    this.file = file;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size > Integer.MAX_VALUE) {
        throw new IOException("index larger than 2 GiB is not supported yet: " + file);
      }
      map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
    }
    int size = map.capacity();
    if (size < 5 + IndexWriter.TOC_BYTES || map.getInt(0) != IndexWriter.MAGIC) {
      throw corrupt("bad magic or too short");
    }
    if (map.get(4) != IndexWriter.FORMAT_V2) {
      throw corrupt("unsupported index version " + map.get(4));
    }
    int tocAt = size - IndexWriter.TOC_BYTES;
    checkCrc(tocAt, 48, map.getInt(tocAt + 48), "TOC");
    long symbolsAt = map.getLong(tocAt);
    long postingsTableAt = map.getLong(tocAt + 40);
    symbols = readSymbols((int) symbolsAt);
    readPostingsTable((int) postingsTableAt);
  }

  private IOException corrupt(String what) {
    return new IOException("corrupt index " + file + ": " + what);
  }

  private void checkCrc(int off, int len, int expected, String section) throws IOException {
    ByteBuffer b = map.duplicate();
    b.limit(off + len).position(off);
    CRC32C c = new CRC32C();
    c.update(b);
    if ((int) c.getValue() != expected) {
      throw corrupt(section + " checksum mismatch");
    }
  }

  private String[] readSymbols(int at) throws IOException {
    int len = map.getInt(at);
    checkCrc(at + 4, len, map.getInt(at + 4 + len), "symbol table");
    ByteSource in = new ByteSource(slice(at + 4, len));
    int n = in.be32();
    String[] out = new String[n];
    for (int i = 0; i < n; i++) {
      out[i] = in.string().intern();
    }
    return out;
  }

  private void readPostingsTable(int at) throws IOException {
    int len = map.getInt(at);
    checkCrc(at + 4, len, map.getInt(at + 4 + len), "postings offset table");
    ByteSource in = new ByteSource(slice(at + 4, len));
    int n = in.be32();
    for (int i = 0; i < n; i++) {
      if (in.uvarint() != 2) {
        throw corrupt("postings offset entry without 2 keys");
      }
      String name = in.string();
      String value = in.string();
      int off = Math.toIntExact(in.uvarint());
      postings.computeIfAbsent(name, k -> new TreeMap<>(Utf8Order.COMPARATOR)).put(value, off);
    }
  }

  private ByteBuffer slice(int off, int len) {
    ByteBuffer b = map.duplicate();
    b.limit(off + len).position(off);
    return b.slice();
  }

  @Override
  public int[] all() {
    return get("", "");
  }

  @Override
  public Collection<String> values(String name) {
    if (name.isEmpty()) {
      return List.of();
    }
    Map<String, Integer> v = postings.get(name);
    return v == null ? List.of() : v.keySet();
  }

  /** Label names, sorted, without the all-postings key. */
  Set<String> labelNames() {
    Set<String> names = new java.util.TreeSet<>(Utf8Order.COMPARATOR);
    names.addAll(postings.keySet());
    names.remove("");
    return names;
  }

  @Override
  public int[] get(String name, String value) {
    Map<String, Integer> v = postings.get(name);
    Integer off = v == null ? null : v.get(value);
    if (off == null) {
      return Sorted.EMPTY;
    }
    int len = map.getInt(off);
    ByteBuffer b = slice(off + 4, len);
    int n = b.getInt();
    int[] refs = new int[n];
    for (int i = 0; i < n; i++) {
      refs[i] = b.getInt();
    }
    return refs;
  }

  /** Decodes the series with ID {@code ref}. */
  IndexWriter.SeriesEntry series(int ref) {
    ByteBuffer b = map.duplicate();
    b.position((int) ((long) ref * 16));
    ByteSource in = new ByteSource(b);
    in.uvarint(); // length
    int nLabels = (int) in.uvarint();
    String[] pairs = new String[nLabels * 2];
    for (int i = 0; i < pairs.length; i++) {
      pairs[i] = symbols[(int) in.uvarint()];
    }
    int nChunks = (int) in.uvarint();
    List<IndexWriter.ChunkMeta> chunks = new ArrayList<>(nChunks);
    if (nChunks > 0) {
      long mint = in.varint();
      long maxt = mint + in.uvarint();
      long cref = in.uvarint();
      chunks.add(new IndexWriter.ChunkMeta(mint, maxt, cref));
      for (int i = 1; i < nChunks; i++) {
        mint = maxt + in.uvarint();
        maxt = mint + in.uvarint();
        cref += in.varint();
        chunks.add(new IndexWriter.ChunkMeta(mint, maxt, cref));
      }
    }
    return new IndexWriter.SeriesEntry(Labels.ofSortedPairs(pairs), chunks);
  }
}
