package dev.weir.storage.tsdb.block;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.labels.Utf8Order;
import dev.weir.storage.tsdb.postings.Selector;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * An immutable block on disk in Prometheus' format, open for queries. Opening verifies the
 * index's checksums; chunk checksums are verified as chunks are read.
 *
 * <p>Thread-safe.
 */
public final class Block {
  private final Path dir;
  private final BlockMeta meta;
  private final IndexReader index;
  private final ChunkReader chunks;

  private Block(Path dir, BlockMeta meta, IndexReader index, ChunkReader chunks) {
    this.dir = dir;
    this.meta = meta;
    this.index = index;
    this.chunks = chunks;
  }

  public static Block open(Path dir) throws IOException {
    BlockMeta meta = BlockMeta.read(dir);
    return new Block(dir, meta, new IndexReader(dir.resolve("index")), new ChunkReader(dir.resolve("chunks")));
  }

  public Path dir() {
    return dir;
  }

  public BlockMeta meta() {
    return meta;
  }

  /** Whether the block holds samples in {@code [mint, maxt]} (its maxTime is exclusive). */
  public boolean overlaps(long mint, long maxt) {
    return meta.minTime() <= maxt && meta.maxTime() > mint;
  }

  /** Series matching all matchers with chunks overlapping {@code [mint, maxt]}, label order. */
  public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
    List<SeriesChunks> out = new ArrayList<>();
    if (!overlaps(mint, maxt)) {
      return out;
    }
    try {
      for (int ref : Selector.select(index, matchers)) {
        IndexWriter.SeriesEntry e = index.series(ref);
        List<ChunkData> data = new ArrayList<>();
        for (IndexWriter.ChunkMeta c : e.chunks()) {
          if (c.maxTime() >= mint && c.minTime() <= maxt) {
            ChunkReader.RawChunk raw = chunks.read(c.ref());
            data.add(new ChunkData(c.minTime(), c.maxTime(), raw.data(), raw.encoding()));
          }
        }
        if (!data.isEmpty()) {
          out.add(new SeriesChunks(e.labels(), data));
        }
      }
    } catch (IOException e) {
      throw new ServerErrorException("reading block " + dir + ": " + e.getMessage(), e);
    }
    return out;
  }

  public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
    if (!overlaps(mint, maxt)) {
      return List.of();
    }
    if (matchers.isEmpty()) {
      return new ArrayList<>(index.labelNames());
    }
    TreeSet<String> names = new TreeSet<>(Utf8Order.COMPARATOR);
    for (int ref : Selector.select(index, matchers)) {
      names.addAll(index.series(ref).labels().names());
    }
    return new ArrayList<>(names);
  }

  public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
    if (!overlaps(mint, maxt)) {
      return List.of();
    }
    TreeSet<String> values = new TreeSet<>(Utf8Order.COMPARATOR);
    if (matchers.isEmpty()) {
      values.addAll(index.values(name));
    } else {
      for (int ref : Selector.select(index, matchers)) {
        Labels l = index.series(ref).labels();
        String v = l.get(name);
        if (v != null) {
          values.add(v);
        }
      }
    }
    return new ArrayList<>(values);
  }

  @Override
  public String toString() {
    return "block " + meta.ulid() + " [" + meta.minTime() + ", " + meta.maxTime() + ")";
  }
}
