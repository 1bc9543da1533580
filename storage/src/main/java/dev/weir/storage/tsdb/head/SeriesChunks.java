package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.chunk.XorIterator;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.Arrays;
import java.util.List;

/** A series selected by a query, with the chunks that overlap the query range. Immutable. */
public record SeriesChunks(Labels labels, List<ChunkData> chunks) {

  /**
   * Decoded samples of this series within {@code [mint, maxt]}, in time order. Chunks from
   * different sources (a block and the head) may overlap; a timestamp then appears once.
   */
  public Samples samples(long mint, long maxt) {
    for (int i = 1; i < chunks.size(); i++) {
      if (chunks.get(i).minTime() <= chunks.get(i - 1).maxTime()) {
        return mergedSamples(mint, maxt);
      }
    }
    return orderedSamples(mint, maxt);
  }

  private Samples orderedSamples(long mint, long maxt) {
    int cap = 0;
    for (ChunkData c : chunks) {
      cap += c.encoding() == Chunks.XOR ? XorIterator.numSamples(c.bytes()) : 0;
    }
    long[] ts = new long[cap];
    double[] vs = new double[cap];
    int n = 0;
    for (ChunkData c : chunks) {
      if (c.encoding() != Chunks.XOR) {
        continue; // histogram samples: see histograms()
      }
      XorIterator it = new XorIterator(c.bytes());
      while (it.next()) {
        long t = it.timestamp();
        if (t < mint) {
          continue;
        }
        if (t > maxt) {
          break;
        }
        ts[n] = t;
        vs[n] = it.value();
        n++;
      }
    }
    return new Samples(Arrays.copyOf(ts, n), Arrays.copyOf(vs, n));
  }

  private Samples mergedSamples(long mint, long maxt) {
    List<long[]> pairs = new java.util.ArrayList<>();
    for (ChunkData c : chunks) {
      if (c.encoding() != Chunks.XOR) {
        continue; // histogram samples: see histograms()
      }
      XorIterator it = new XorIterator(c.bytes());
      while (it.next()) {
        if (it.timestamp() >= mint && it.timestamp() <= maxt) {
          pairs.add(new long[] {it.timestamp(), Double.doubleToRawLongBits(it.value())});
        }
      }
    }
    pairs.sort((a, b) -> Long.compare(a[0], b[0])); // stable: the first source wins a tie
    long[] ts = new long[pairs.size()];
    double[] vs = new double[pairs.size()];
    int n = 0;
    for (long[] p : pairs) {
      if (n > 0 && ts[n - 1] == p[0]) {
        continue;
      }
      ts[n] = p[0];
      vs[n] = Double.longBitsToDouble(p[1]);
      n++;
    }
    return new Samples(Arrays.copyOf(ts, n), Arrays.copyOf(vs, n));
  }

  /**
   * Decoded native histogram samples of this series within {@code [mint, maxt]}, in time order;
   * a timestamp found in several chunks (overlapping sources) appears once, the first chunk's.
   */
  public Histograms histograms(long mint, long maxt) {
    java.util.TreeMap<Long, NativeHistogram> byTime = new java.util.TreeMap<>();
    for (ChunkData c : chunks) {
      HistogramChunkSamples.forEach(c, mint, maxt, byTime::putIfAbsent);
    }
    long[] ts = new long[byTime.size()];
    NativeHistogram[] hs = new NativeHistogram[byTime.size()];
    int n = 0;
    for (var e : byTime.entrySet()) {
      ts[n] = e.getKey();
      hs[n++] = e.getValue();
    }
    return new Histograms(ts, hs);
  }

  /** Timestamps (milliseconds) and histograms of equal length. */
  public record Histograms(long[] timestamps, NativeHistogram[] histograms) {
    public int size() {
      return timestamps.length;
    }
  }

  /** Timestamps (milliseconds) and values of equal length. */
  public record Samples(long[] timestamps, double[] values) {
    public int size() {
      return timestamps.length;
    }
  }
}
