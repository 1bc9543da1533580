package dev.weir.storage.tsdb.block;

import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Writes a block directory in Prometheus' on-disk format: {@code chunks/000001...}, {@code index},
 * {@code meta.json} and an empty {@code tombstones}. Everything is written into
 * {@code <ulid>.tmp}, fsynced, then renamed to {@code <ulid>}, so a crash never leaves a partial
 * block under a block name.
 *
 * <p>Stateless.
 */
public final class BlockWriter {
  /** Magic and version of an empty tombstones file, then the CRC32C of no tombstones (0). */
  private static final byte[] EMPTY_TOMBSTONES = {0x01, 0x30, (byte) 0xBA, 0x30, 0x01, 0, 0, 0, 0};

  private BlockWriter() {}

  /**
   * Writes a block.
   *
   * @param parent directory that will hold the block directory
   * @param series sorted by labels; every chunk inside {@code [minTime, maxTime)}
   * @param extraJson extra top-level members for meta.json, or ""
   * @return the metadata written
   */
  public static BlockMeta write(Path parent, String ulid, long minTime, long maxTime, List<SeriesChunks> series,
      String extraJson) throws IOException {
    Files.createDirectories(parent);
    Path tmp = parent.resolve(ulid + ".tmp");
    deleteRecursively(tmp);
    Files.createDirectories(tmp);
    long samples = 0;
    long numChunks = 0;
    List<IndexWriter.SeriesEntry> entries = new ArrayList<>(series.size());
    try (ChunkWriter cw = new ChunkWriter(tmp.resolve("chunks"))) {
      for (SeriesChunks s : series) {
        List<IndexWriter.ChunkMeta> metas = new ArrayList<>(s.chunks().size());
        for (ChunkData c : s.chunks()) {
          if (c.minTime() < minTime || c.maxTime() >= maxTime) {
            throw new IllegalArgumentException("chunk [" + c.minTime() + ", " + c.maxTime() + "] of " + s.labels()
                + " outside the block range [" + minTime + ", " + maxTime + ")");
          }
          metas.add(new IndexWriter.ChunkMeta(c.minTime(), c.maxTime(), cw.write(c.encoding(), c.bytes())));
          samples += c.numSamples();
        }
        if (!metas.isEmpty()) {
          entries.add(new IndexWriter.SeriesEntry(s.labels(), metas));
          numChunks += metas.size();
        }
      }
    }
    IndexWriter.write(tmp.resolve("index"), entries);
    BlockMeta meta = new BlockMeta(ulid, minTime, maxTime, samples, entries.size(), numChunks, 1,
        List.of(ulid), extraJson);
    writeSynced(tmp.resolve(BlockMeta.FILE), meta.toJson().getBytes(StandardCharsets.UTF_8));
    writeSynced(tmp.resolve("tombstones"), EMPTY_TOMBSTONES);
    syncDir(tmp.resolve("chunks"));
    syncDir(tmp);
    Path dest = parent.resolve(ulid);
    Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
    syncDir(parent);
    return meta;
  }

  private static void writeSynced(Path p, byte[] content) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(content);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
  }

  /** Fsyncs a directory (its entries: created files, the block's rename); a failure is an error. */
  static void syncDir(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  /** Deletes a directory tree (no error when missing). */
  public static void deleteRecursively(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(x);
      }
    }
  }
}
