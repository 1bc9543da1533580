package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.XorIterator;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.Arrays;
import java.util.List;

/** A series selected by a query, with the chunks that overlap the query range. Immutable. */
public record SeriesChunks(Labels labels, List<ChunkData> chunks) {

  /** Decoded samples of this series within {@code [mint, maxt]}, in time order. */
  public Samples samples(long mint, long maxt) {
    int cap = 0;
    for (ChunkData c : chunks) {
      cap += XorIterator.numSamples(c.bytes());
    }
    long[] ts = new long[cap];
    double[] vs = new double[cap];
    int n = 0;
    for (ChunkData c : chunks) {
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

  /** Timestamps (milliseconds) and values of equal length. */
  public record Samples(long[] timestamps, double[] values) {
    public int size() {
      return timestamps.length;
    }
  }
}
