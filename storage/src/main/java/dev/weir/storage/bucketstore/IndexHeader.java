package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.labels.Utf8Order;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * What a query needs of a block's index before it reads anything else (Mimir's "index header"):
 * the TOC, the symbol table and the postings offset table. It is built from the raw bytes of those
 * three sections ({@link Raw}), which is also what {@link IndexHeaderCache} keeps on disk, so a
 * restart parses the cached bytes instead of reading the bucket. Every section's checksum is
 * verified.
 *
 * <p>Immutable and thread-safe.
 */
final class IndexHeader {
  /** The three sections exactly as the index holds them (length, content, CRC32C). */
  record Raw(long indexSize, byte[] toc, byte[] symbols, byte[] postingsTable) {
    long bytes() {
      return toc.length + symbols.length + postingsTable.length;
    }
  }

  private final Raw raw;
  private final IndexToc toc;
  private final String[] symbols;
  /** Label name → value → start of its postings list in the index. */
  private final TreeMap<String, TreeMap<String, Long>> postings = new TreeMap<>(Utf8Order.COMPARATOR);
  /** Every postings start and TOC boundary, ascending: a list ends at the next one. */
  private final long[] boundaries;

  private IndexHeader(Raw raw, IndexToc toc, String[] symbols, long[] boundaries) {
    this.raw = raw;
    this.toc = toc;
    this.symbols = symbols;
    this.boundaries = boundaries;
  }

  /** Parses and verifies the sections. */
  static IndexHeader parse(Raw raw) throws IOException {
    IndexToc toc = IndexToc.parse(raw.toc(), raw.indexSize());
    try {
      String[] symbols = parseSymbols(raw.symbols());
      TreeMap<String, TreeMap<String, Long>> table = parsePostingsTable(raw.postingsTable());
      long[] starts = table.values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).toArray();
      long[] tocBounds = toc.boundaries();
      long[] bounds = Arrays.copyOf(starts, starts.length + tocBounds.length);
      System.arraycopy(tocBounds, 0, bounds, starts.length, tocBounds.length);
      Arrays.sort(bounds);
      IndexHeader h = new IndexHeader(raw, toc, symbols, bounds);
      h.postings.putAll(table);
      return h;
    } catch (BufferUnderflowException | IllegalStateException | IndexOutOfBoundsException e) {
      throw new IOException("index header sections are malformed: " + e, e);
    }
  }

  /** The content of a section ({@code len | content | crc}), checksum verified. */
  static ByteBuffer sectionContent(byte[] section, String what) throws IOException {
    if (section.length < 8) {
      throw new IOException(what + " section is truncated");
    }
    ByteBuffer b = ByteBuffer.wrap(section);
    int len = b.getInt(0);
    if (len < 0 || 8L + len > section.length) {
      throw new IOException(what + " section length " + len + " exceeds its " + section.length + " bytes");
    }
    CRC32C crc = new CRC32C();
    crc.update(section, 4, len);
    if ((int) crc.getValue() != b.getInt(4 + len)) {
      throw new IOException(what + " checksum mismatch");
    }
    return ByteBuffer.wrap(section, 4, len).slice();
  }

  /** The section at the start of {@code bytes}, without what follows it (padding, later sections). */
  static byte[] trimSection(byte[] bytes, String what) throws IOException {
    if (bytes.length < 4) {
      throw new IOException(what + " section is truncated");
    }
    int len = ByteBuffer.wrap(bytes).getInt(0);
    if (len < 0 || 8L + len > bytes.length) {
      throw new IOException(what + " section length " + len + " exceeds the " + bytes.length + " bytes read");
    }
    return bytes.length == 8 + len ? bytes : Arrays.copyOf(bytes, 8 + len);
  }

  private static String[] parseSymbols(byte[] section) throws IOException {
    ByteSource in = new ByteSource(sectionContent(section, "symbol table"));
    int n = in.be32();
    if (n < 0 || n > in.remaining()) {
      throw new IOException("symbol count " + n + " exceeds the symbol table");
    }
    String[] out = new String[n];
    for (int i = 0; i < n; i++) {
      out[i] = in.string();
    }
    return out;
  }

  private static TreeMap<String, TreeMap<String, Long>> parsePostingsTable(byte[] section) throws IOException {
    ByteSource in = new ByteSource(sectionContent(section, "postings offset table"));
    int n = in.be32();
    TreeMap<String, TreeMap<String, Long>> out = new TreeMap<>(Utf8Order.COMPARATOR);
    for (int i = 0; i < n; i++) {
      if (in.uvarint() != 2) {
        throw new IOException("postings offset entry without 2 keys");
      }
      String name = in.string();
      String value = in.string();
      out.computeIfAbsent(name, k -> new TreeMap<>(Utf8Order.COMPARATOR)).put(value, in.uvarint());
    }
    return out;
  }

  Raw raw() {
    return raw;
  }

  IndexToc toc() {
    return toc;
  }

  String symbol(long ref) throws IOException {
    if (ref < 0 || ref >= symbols.length) {
      throw new IOException("symbol reference " + ref + " outside the symbol table of " + symbols.length);
    }
    return symbols[(int) ref];
  }

  /** Where the postings list of {@code name=value} lies (its end bounds, padding included); null when absent. */
  RangeReads.@Nullable Range postings(String name, String value) {
    Map<String, Long> values = postings.get(name);
    Long start = values == null ? null : values.get(value);
    return start == null ? null : new RangeReads.Range(start, next(start));
  }

  /** The end of the series section: series entries never reach past it. */
  long seriesEnd() {
    return next(toc.series());
  }

  private long next(long offset) {
    int i = Arrays.binarySearch(boundaries, offset);
    i = i < 0 ? -i - 1 : i;
    while (i < boundaries.length && boundaries[i] <= offset) {
      i++;
    }
    return i < boundaries.length ? boundaries[i] : toc.end();
  }

  /** The values of a label name, sorted; empty for an unknown name and for "". */
  Collection<String> values(String name) {
    if (name.isEmpty()) {
      return List.of();
    }
    Map<String, Long> v = postings.get(name);
    return v == null ? List.of() : v.keySet();
  }

  /** Label names, sorted, without the all-postings key. */
  Set<String> labelNames() {
    Set<String> names = new TreeSet<>(Utf8Order.COMPARATOR);
    names.addAll(postings.keySet());
    names.remove("");
    return names;
  }
}
