package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.TenantPaths;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Index headers cached on local disk, {@code <sync-dir>/<tenant>/<block ID>/index-header}, so a
 * restarted store-gateway parses them instead of reading them from the bucket again. A file holds
 * the checksum of the meta.json it was built for (a block-builder may replace a block under the
 * same ID; a different meta.json makes the file stale), the index size and the three raw
 * sections, followed by a CRC32C of all of it. A file that is stale, truncated or fails its
 * checksum is reported and rebuilt by the caller. Written to a temporary file and renamed, so a
 * crash leaves the old file or the new one.
 *
 * <p>Thread-safe for different blocks.
 */
final class IndexHeaderCache {
  static final String FILE = "index-header";
  /** "WIH" and format version 1. */
  private static final int MAGIC = 0x57494801;

  /** What a lookup found: the sections, or null with the reason they must be read from the bucket. */
  record Lookup(IndexHeader.@Nullable Raw raw, String outcome) {
    static final String HIT = "hit";
    static final String MISSING = "missing";
    static final String STALE = "stale";
    static final String CORRUPT = "corrupt";
  }

  private final Path dir;

  IndexHeaderCache(Path dir) {
    this.dir = dir;
  }

  Path file(String tenant, String id) {
    return TenantPaths.child(dir, tenant).resolve(id).resolve(FILE);
  }

  Lookup load(String tenant, String id, long metaChecksum) throws IOException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file(tenant, id));
    } catch (NoSuchFileException e) {
      return new Lookup(null, Lookup.MISSING);
    }
    if (bytes.length < 4 + 4 + 8 + 8 + 3 * 4 + 4) {
      return new Lookup(null, Lookup.CORRUPT);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    if (b.getInt(0) != MAGIC || (int) crc.getValue() != b.getInt(bytes.length - 4)) {
      return new Lookup(null, Lookup.CORRUPT);
    }
    b.position(4);
    if (b.getLong() != metaChecksum) {
      return new Lookup(null, Lookup.STALE);
    }
    long indexSize = b.getLong();
    byte[] toc = section(b);
    byte[] symbols = section(b);
    byte[] postingsTable = section(b);
    if (toc == null || symbols == null || postingsTable == null || b.remaining() != 4) {
      return new Lookup(null, Lookup.CORRUPT);
    }
    return new Lookup(new IndexHeader.Raw(indexSize, toc, symbols, postingsTable), Lookup.HIT);
  }

  private static byte @Nullable [] section(ByteBuffer b) {
    if (b.remaining() < 4) {
      return null;
    }
    int n = b.getInt();
    if (n < 0 || n > b.remaining()) {
      return null;
    }
    byte[] out = new byte[n];
    b.get(out);
    return out;
  }

  void store(String tenant, String id, long metaChecksum, IndexHeader.Raw raw) throws IOException {
    Path file = file(tenant, id);
    Files.createDirectories(file.getParent());
    ByteSink s = new ByteSink((int) raw.bytes() + 64);
    s.putBe32(MAGIC).putBe64(metaChecksum).putBe64(raw.indexSize());
    for (byte[] section : new byte[][] {raw.toc(), raw.symbols(), raw.postingsTable()}) {
      s.putBe32(section.length).put(section, 0, section.length);
    }
    CRC32C crc = new CRC32C();
    crc.update(s.array(), 0, s.length());
    s.putBe32((int) crc.getValue());
    Path tmp = file.resolveSibling(FILE + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer buf = s.asBuffer();
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** Deletes the cache of one block (no error when absent). */
  void delete(String tenant, String id) throws IOException {
    BlockWriter.deleteRecursively(file(tenant, id).getParent());
  }

  /** Deletes the cache of every block not in {@code keep} (tenant → block IDs). */
  void retainOnly(Map<String, Set<String>> keep) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (DirectoryStream<Path> tenants = Files.newDirectoryStream(dir, Files::isDirectory)) {
      for (Path t : tenants) {
        Set<String> ids = keep.getOrDefault(t.getFileName().toString(), Set.of());
        try (DirectoryStream<Path> blocks = Files.newDirectoryStream(t)) {
          for (Path b : blocks) {
            if (!ids.contains(b.getFileName().toString())) {
              BlockWriter.deleteRecursively(b);
            }
          }
        }
      }
    }
  }
}
