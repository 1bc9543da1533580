package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.FloatHistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.HistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import org.jspecify.annotations.Nullable;

/**
 * The histogram chunk a {@link MemSeries} appends to: an integer ({@link Chunks#HISTOGRAM}) or a
 * float ({@link Chunks#FLOAT_HISTOGRAM}) histogram chunk, chosen by the first sample. A sample of
 * the other kind, or one the chunk appender turns down (a layout change it cannot absorb, a
 * counter reset, a full chunk), needs a new chunk: {@link #append} says so with false.
 *
 * <p>Not thread-safe: used under the series' monitor.
 */
final class HistogramHead {
  private final @Nullable HistogramChunkAppender ints;
  private final @Nullable FloatHistogramChunkAppender floats;

  private HistogramHead(@Nullable HistogramChunkAppender ints, @Nullable FloatHistogramChunkAppender floats) {
    this.ints = ints;
    this.floats = floats;
  }

  /** An empty chunk for samples of the kind of {@code first}, with at most {@code maxSamples} samples. */
  static HistogramHead forSample(NativeHistogram first, int maxSamples) {
    return first.isFloat() ? new HistogramHead(null, new FloatHistogramChunkAppender(maxSamples))
        : new HistogramHead(new HistogramChunkAppender(maxSamples), null);
  }

  /** Appends a sample newer than {@link #maxTime()}; false (nothing written) when it needs a new chunk. */
  boolean append(long t, NativeHistogram h) {
    HistogramChunkAppender i = ints;
    if (i != null) {
      return !h.isFloat() && i.append(t, h);
    }
    FloatHistogramChunkAppender f = floats;
    return f != null && h.isFloat() && f.append(t, h);
  }

  byte encoding() {
    return ints != null ? Chunks.HISTOGRAM : Chunks.FLOAT_HISTOGRAM;
  }

  int numSamples() {
    HistogramChunkAppender i = ints;
    FloatHistogramChunkAppender f = floats;
    return i != null ? i.numSamples() : f != null ? f.numSamples() : 0;
  }

  long minTime() {
    HistogramChunkAppender i = ints;
    FloatHistogramChunkAppender f = floats;
    return i != null ? i.minTime() : f != null ? f.minTime() : Long.MAX_VALUE;
  }

  long maxTime() {
    HistogramChunkAppender i = ints;
    FloatHistogramChunkAppender f = floats;
    return i != null ? i.maxTime() : f != null ? f.maxTime() : Long.MIN_VALUE;
  }

  byte[] bytes() {
    HistogramChunkAppender i = ints;
    FloatHistogramChunkAppender f = floats;
    return i != null ? i.bytes() : f != null ? f.bytes() : new byte[0];
  }

  int capacityBytes() {
    HistogramChunkAppender i = ints;
    FloatHistogramChunkAppender f = floats;
    return i != null ? i.capacityBytes() : f != null ? f.capacityBytes() : 0;
  }

  /**
   * The histogram stored at {@code t} in a histogram chunk of this encoding, or null. Counter reset
   * hints are not compared by callers: a chunk gives back what its header implies, not the hint sent.
   */
  static @Nullable NativeHistogram at(byte encoding, byte[] chunk, long t) {
    NativeHistogram[] found = new NativeHistogram[1];
    HistogramChunkSamples.forEach(new ChunkData(t, t, chunk, encoding), t, t, (ts, h) -> found[0] = h);
    return found[0];
  }

  /** See {@link dev.weir.storage.tsdb.chunk.HistogramValues#sameValue}. */
  static boolean sameValue(NativeHistogram a, NativeHistogram b) {
    return dev.weir.storage.tsdb.chunk.HistogramValues.sameValue(a, b);
  }
}
