package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.chunk.XorIterator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The out-of-order samples of one series (Prometheus' {@code OOOChunk} and its m-mapped chunks):
 * an open buffer of at most {@code capMax} samples kept sorted by time, and the XOR chunks the
 * buffer became each time it filled up. Each chunk is sorted; chunks may overlap one another and
 * the series' in-order chunks, so readers merge them ({@link SeriesChunks#samples}). A timestamp
 * is held at most once across buffer and chunks (the head checks before inserting).
 *
 * <p>Memory: the buffer holds {@code capMax} × 16 bytes at most; every full buffer becomes a
 * chunk of about 1–2 bytes per sample more for regular data, kept until OOO compaction.
 *
 * <p>Compaction: {@link #seal()} closes the buffer and marks every chunk so far; those are written
 * to blocks while new samples go to new chunks; {@link #dropSealed()} then removes them.
 *
 * <p>Not thread-safe: guarded by the owning {@link MemSeries}' monitor.
 */
final class OooSeries {
  private long[] ts;
  private double[] vs;
  private int n;
  private final List<ChunkData> chunks = new ArrayList<>(2);
  private int sealed;
  private int numSamples;

  OooSeries(int capMax) {
    ts = new long[Math.min(capMax, 8)];
    vs = new double[ts.length];
  }

  int numSamples() {
    return numSamples;
  }

  boolean isEmpty() {
    return numSamples == 0;
  }

  /** Inserts a sample whose timestamp is not held yet; cuts the buffer into a chunk when full. */
  void insert(long t, double v, int capMax) {
    if (n >= capMax) {
      cut();
    }
    if (n == ts.length) {
      int cap = Math.min(capMax, Math.max(8, n * 2));
      ts = Arrays.copyOf(ts, cap);
      vs = Arrays.copyOf(vs, cap);
    }
    int i = Arrays.binarySearch(ts, 0, n, t);
    int at = i >= 0 ? i : -i - 1;
    System.arraycopy(ts, at, ts, at + 1, n - at);
    System.arraycopy(vs, at, vs, at + 1, n - at);
    ts[at] = t;
    vs[at] = v;
    n++;
    numSamples++;
  }

  private void cut() {
    if (n == 0) {
      return;
    }
    chunks.add(encode());
    n = 0;
  }

  private ChunkData encode() {
    XorAppender a = new XorAppender();
    for (int i = 0; i < n; i++) {
      a.append(ts[i], vs[i]);
    }
    return new ChunkData(ts[0], ts[n - 1], a.bytes());
  }

  /**
   * Compares with a held sample: {@link SampleLookup#ABSENT} when no sample has timestamp
   * {@code t}, {@link SampleLookup#SAME} when one has exactly these value bits, else
   * {@link SampleLookup#DIFFERENT}.
   */
  int lookup(long t, long valueBits) {
    int i = Arrays.binarySearch(ts, 0, n, t);
    if (i >= 0) {
      return Double.doubleToRawLongBits(vs[i]) == valueBits ? SampleLookup.SAME : SampleLookup.DIFFERENT;
    }
    for (ChunkData c : chunks) {
      if (c.minTime() <= t && t <= c.maxTime()) {
        int r = SampleLookup.inChunk(c.bytes(), t, valueBits);
        if (r != SampleLookup.ABSENT) {
          return r;
        }
      }
    }
    return SampleLookup.ABSENT;
  }

  /** The chunks overlapping {@code [mint, maxt]} (the buffer encoded as one more chunk). */
  void chunks(long mint, long maxt, List<ChunkData> out) {
    for (ChunkData c : chunks) {
      if (c.maxTime() >= mint && c.minTime() <= maxt) {
        out.add(c);
      }
    }
    if (n > 0 && ts[n - 1] >= mint && ts[0] <= maxt) {
      out.add(encode());
    }
  }

  long minTime() {
    long m = n > 0 ? ts[0] : Long.MAX_VALUE;
    for (ChunkData c : chunks) {
      m = Math.min(m, c.minTime());
    }
    return m;
  }

  long maxTime() {
    long m = n > 0 ? ts[n - 1] : Long.MIN_VALUE;
    for (ChunkData c : chunks) {
      m = Math.max(m, c.maxTime());
    }
    return m;
  }

  /** Closes the buffer into a chunk and marks every chunk for compaction; returns them. */
  List<ChunkData> seal() {
    cut();
    sealed = chunks.size();
    return List.copyOf(chunks);
  }

  /** Removes the chunks {@link #seal()} returned (they are in a block now). */
  void dropSealed() {
    for (int i = 0; i < sealed; i++) {
      numSamples -= XorIterator.numSamples(chunks.get(0).bytes());
      chunks.remove(0);
    }
    sealed = 0;
  }

  /** Heap bytes of the buffer arrays and the chunks. */
  long bytes() {
    long b = 16L * ts.length + 32;
    for (ChunkData c : chunks) {
      b += c.bytes().length + 32;
    }
    return b;
  }
}
