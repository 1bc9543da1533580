package dev.weir.storage.testing;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Builds blocks with the ingester's {@link BlockWriter} and uploads them into a bucket. */
public final class TestBlocks {
  public static final long HOUR = 3_600_000L;

  /** Samples of series, by labels; added in any order, written sorted. */
  public static final class Builder {
    final TreeMap<Labels, TreeMap<Long, Double>> series = new TreeMap<>();

    public Builder add(Labels labels, long ts, double value) {
      series.computeIfAbsent(labels, k -> new TreeMap<>()).put(ts, value);
      return this;
    }

    /** Samples every {@code step} ms in {@code [from, to)} with value {@code f(ts)}. */
    public Builder addRange(Labels labels, long from, long to, long step, java.util.function.LongToDoubleFunction f) {
      for (long t = from; t < to; t += step) {
        add(labels, t, f.applyAsDouble(t));
      }
      return this;
    }

    /** Writes the block (chunks cut at 120 samples) under {@code scratch} and uploads it; returns its ID. */
    public String upload(Bucket bucket, Path scratch, String tenant, long minTime, long maxTime, int entropy)
        throws IOException {
      String id = Ulid.of(minTime, new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) entropy});
      List<SeriesChunks> all = new ArrayList<>();
      for (Map.Entry<Labels, TreeMap<Long, Double>> e : series.entrySet()) {
        all.add(new SeriesChunks(e.getKey(), chunks(e.getValue())));
      }
      Path dir = scratch.resolve(tenant + "-" + id);
      BlockWriter.write(dir, id, minTime, maxTime, all, "");
      bucket.upload(tenant, id, dir.resolve(id));
      return id;
    }
  }

  public static List<ChunkData> chunks(TreeMap<Long, Double> samples) {
    List<ChunkData> out = new ArrayList<>();
    XorAppender app = null;
    for (Map.Entry<Long, Double> s : samples.entrySet()) {
      if (app != null && app.numSamples() == 120) {
        out.add(new ChunkData(app.minTime(), app.maxTime(), app.bytes()));
        app = null;
      }
      if (app == null) {
        app = new XorAppender();
      }
      app.append(s.getKey(), s.getValue());
    }
    if (app != null) {
      out.add(new ChunkData(app.minTime(), app.maxTime(), app.bytes()));
    }
    return out;
  }

  private TestBlocks() {}
}
