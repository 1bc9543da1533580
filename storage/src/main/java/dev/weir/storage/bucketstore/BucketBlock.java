package dev.weir.storage.bucketstore;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.labels.Utf8Order;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * One block of the bucket, open for queries: its meta and index header in memory, everything else
 * read by range when a query needs it (postings of the matchers' values, the selected series'
 * entries, the chunks of those series that overlap the query). It holds no file or connection, so
 * dropping it needs no close, and a query still running on a block that a sync dropped finishes
 * from the bucket, or fails with the bucket's {@link java.nio.file.NoSuchFileException} when the
 * block's files are gone.
 *
 * <p>Immutable and thread-safe.
 */
final class BucketBlock {
  /** Index ranges closer than this are read at once (a few KiB wasted against a round trip). */
  static final long INDEX_MAX_GAP = 4 * 1024;
  /** Chunk ranges closer than this are read at once. */
  static final long CHUNK_MAX_GAP = 16 * 1024;
  /** Merged reads stop growing at this size, so one read never holds much more than it needs. */
  static final int MAX_READ = 16 << 20;

  private final String tenant;
  private final BlockMeta meta;
  private final IndexHeader header;
  private final Bucket bucket;
  private final long metaChecksum;

  BucketBlock(String tenant, BlockMeta meta, IndexHeader header, Bucket bucket, long metaChecksum) {
    this.tenant = tenant;
    this.meta = meta;
    this.header = header;
    this.bucket = bucket;
    this.metaChecksum = metaChecksum;
  }

  String id() {
    return meta.ulid();
  }

  BlockMeta meta() {
    return meta;
  }

  /** Identifies the meta.json this block was loaded with: a replaced block has another. */
  long metaChecksum() {
    return metaChecksum;
  }

  /** Whether the block may hold samples in {@code [mint, maxt]} (meta.json's maxTime is exclusive). */
  boolean overlaps(long mint, long maxt) {
    return meta.minTime() <= maxt && meta.maxTime() > mint;
  }

  /** Series matching every matcher with the chunks overlapping {@code [mint, maxt]}, in label order. */
  List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers, QueryBudget budget) throws IOException {
    List<SeriesReader.Entry> entries = SeriesReader.read(header, index(), BlockPostings.select(header, index(),
        matchers));
    List<SeriesReader.ChunkRef> wanted = new ArrayList<>();
    List<Long> nextRefs = new ArrayList<>();
    List<Labels> labels = new ArrayList<>();
    List<Integer> firstChunk = new ArrayList<>();
    for (SeriesReader.Entry e : entries) {
      int before = wanted.size();
      List<SeriesReader.ChunkRef> cs = e.chunks();
      for (int i = 0; i < cs.size(); i++) {
        SeriesReader.ChunkRef c = cs.get(i);
        if (c.maxTime() >= mint && c.minTime() <= maxt) {
          wanted.add(c);
          nextRefs.add(i + 1 < cs.size() ? cs.get(i + 1).ref() : -1L);
        }
      }
      if (wanted.size() > before) {
        labels.add(e.labels());
        firstChunk.add(before);
      }
    }
    List<ChunkData> data = ChunkFetcher.fetch(wanted, nextRefs, this::segment, budget);
    List<SeriesChunks> out = new ArrayList<>(labels.size());
    for (int s = 0; s < labels.size(); s++) {
      int to = s + 1 < labels.size() ? firstChunk.get(s + 1) : data.size();
      out.add(new SeriesChunks(labels.get(s), data.subList(firstChunk.get(s), to)));
    }
    return out;
  }

  /** Label names of the series matching the matchers (from the index header alone when there are none). */
  List<String> labelNames(List<Matcher> matchers) throws IOException {
    if (matchers.isEmpty()) {
      return new ArrayList<>(header.labelNames());
    }
    TreeSet<String> names = new TreeSet<>(Utf8Order.COMPARATOR);
    for (SeriesReader.Entry e : matchingSeries(matchers)) {
      names.addAll(e.labels().names());
    }
    return new ArrayList<>(names);
  }

  /** Values of {@code name} on the series matching the matchers (from the index header alone when there are none). */
  List<String> labelValues(String name, List<Matcher> matchers) throws IOException {
    if (matchers.isEmpty()) {
      return new ArrayList<>(header.values(name));
    }
    TreeSet<String> values = new TreeSet<>(Utf8Order.COMPARATOR);
    for (SeriesReader.Entry e : matchingSeries(matchers)) {
      String v = e.labels().get(name);
      if (v != null) {
        values.add(v);
      }
    }
    return new ArrayList<>(values);
  }

  private List<SeriesReader.Entry> matchingSeries(List<Matcher> matchers) throws IOException {
    return SeriesReader.read(header, index(), BlockPostings.select(header, index(), matchers));
  }

  private RangeReads.FileReader index() {
    return (offset, length) -> bucket.read(tenant, meta.ulid(), "index", offset, length);
  }

  private RangeReads.FileReader segment(int n) {
    String file = String.format("chunks/%06d", n + 1);
    return (offset, length) -> bucket.read(tenant, meta.ulid(), file, offset, length);
  }

  @Override
  public String toString() {
    return "block " + tenant + "/" + meta.ulid();
  }
}
