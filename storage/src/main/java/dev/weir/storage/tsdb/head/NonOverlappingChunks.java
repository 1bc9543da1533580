package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.XorAppender;
import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites a series' chunks so that none overlaps another, for readers that take chunks as they
 * are (remote read's STREAMED_XOR_CHUNKS: Prometheus iterates a series' chunks one after the other
 * and expects increasing timestamps). Chunks that overlap nothing are kept as they are; each run
 * of overlapping ones (out-of-order chunks, or a block and the head during a compaction) is decoded,
 * merged as {@link SeriesChunks#samples} does (one sample per timestamp) and re-encoded into chunks
 * of at most {@value #SAMPLES_PER_CHUNK} samples. Stateless.
 */
public final class NonOverlappingChunks {
  /** Samples per re-encoded chunk, as the head cuts them. */
  static final int SAMPLES_PER_CHUNK = 120;

  private NonOverlappingChunks() {}

  /** The series with chunks sorted by time and not overlapping (the same object when they were). */
  public static SeriesChunks of(SeriesChunks s) {
    List<ChunkData> in = new ArrayList<>(s.chunks());
    in.sort(java.util.Comparator.comparingLong(ChunkData::minTime));
    boolean overlaps = false;
    for (int i = 1; i < in.size() && !overlaps; i++) {
      overlaps = in.get(i).minTime() <= in.get(i - 1).maxTime();
    }
    if (!overlaps) {
      return in.equals(s.chunks()) ? s : new SeriesChunks(s.labels(), in);
    }
    List<ChunkData> out = new ArrayList<>(in.size());
    int i = 0;
    while (i < in.size()) {
      int j = i + 1;
      long end = in.get(i).maxTime();
      while (j < in.size() && in.get(j).minTime() <= end) {
        end = Math.max(end, in.get(j).maxTime());
        j++;
      }
      if (j == i + 1) {
        out.add(in.get(i));
      } else {
        reencode(new SeriesChunks(s.labels(), in.subList(i, j)).samples(Long.MIN_VALUE, Long.MAX_VALUE), out);
      }
      i = j;
    }
    return new SeriesChunks(s.labels(), out);
  }

  private static void reencode(SeriesChunks.Samples samples, List<ChunkData> out) {
    long[] ts = samples.timestamps();
    double[] vs = samples.values();
    for (int from = 0; from < ts.length; from += SAMPLES_PER_CHUNK) {
      XorAppender a = new XorAppender();
      for (int k = from; k < Math.min(ts.length, from + SAMPLES_PER_CHUNK); k++) {
        a.append(ts[k], vs[k]);
      }
      out.add(new ChunkData(a.minTime(), a.maxTime(), a.bytes()));
    }
  }
}
