package dev.weir.storage.testing;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.FloatHistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.HistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
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
    final TreeMap<Labels, List<ChunkData>> encoded = new TreeMap<>();

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

    /** A series given as ready chunks (histograms, say); its labels must not also have samples. */
    public Builder addChunks(Labels labels, List<ChunkData> chunks) {
      encoded.put(labels, chunks);
      return this;
    }

    /** Writes the block (chunks cut at 120 samples) under {@code scratch} and uploads it; returns its ID. */
    public String upload(Bucket bucket, Path scratch, String tenant, long minTime, long maxTime, int entropy)
        throws IOException {
      String id = Ulid.of(minTime, new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) entropy});
      TreeMap<Labels, List<ChunkData>> sorted = new TreeMap<>(encoded);
      for (Map.Entry<Labels, TreeMap<Long, Double>> e : series.entrySet()) {
        sorted.put(e.getKey(), chunks(e.getValue()));
      }
      List<SeriesChunks> all = new ArrayList<>();
      sorted.forEach((l, c) -> all.add(new SeriesChunks(l, c)));
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

  /**
   * {@code n} counter histograms every {@code step} ms from {@code from} (integer or float counts,
   * schema 2, three positive and one negative bucket, sum = index), in chunks of at most 120 samples.
   */
  public static List<ChunkData> histogramChunks(boolean isFloat, long from, long step, int n) {
    List<ChunkData> out = new ArrayList<>();
    HistogramChunkAppender ia = null;
    FloatHistogramChunkAppender fa = null;
    for (int i = 0; i < n; i++) {
      long t = from + i * step;
      double c = isFloat ? i * 1.25 : i;
      NativeHistogram h = new NativeHistogram(isFloat, NativeHistogram.RESET_UNKNOWN, 2, 0x1p-128, c,
          5 * c, i, new int[] {-1, 3}, new double[] {c, c, 2 * c}, new int[] {0, 1}, new double[] {c},
          new double[0]);
      if (isFloat) {
        if (fa == null || !fa.append(t, h)) {
          if (fa != null) {
            out.add(new ChunkData(fa.minTime(), fa.maxTime(), fa.bytes(), Chunks.FLOAT_HISTOGRAM));
          }
          fa = new FloatHistogramChunkAppender();
          fa.append(t, h);
        }
      } else if (ia == null || !ia.append(t, h)) {
        if (ia != null) {
          out.add(new ChunkData(ia.minTime(), ia.maxTime(), ia.bytes(), Chunks.HISTOGRAM));
        }
        ia = new HistogramChunkAppender();
        ia.append(t, h);
      }
    }
    if (fa != null) {
      out.add(new ChunkData(fa.minTime(), fa.maxTime(), fa.bytes(), Chunks.FLOAT_HISTOGRAM));
    }
    if (ia != null) {
      out.add(new ChunkData(ia.minTime(), ia.maxTime(), ia.bytes(), Chunks.HISTOGRAM));
    }
    return out;
  }

  private TestBlocks() {}
}
