package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.FloatHistogramChunkIterator;
import dev.weir.storage.tsdb.chunk.HistogramChunkIterator;
import dev.weir.storage.tsdb.chunk.NativeHistogram;

/** Walks the samples of a histogram or float histogram chunk. Stateless. */
public final class HistogramChunkSamples {
  /** Receives one decoded sample. */
  @FunctionalInterface
  public interface Sink {
    void accept(long t, NativeHistogram h);
  }

  private HistogramChunkSamples() {}

  /** Calls {@code sink} for each sample of {@code c} in {@code [mint, maxt]}; nothing for an XOR chunk. */
  public static void forEach(ChunkData c, long mint, long maxt, Sink sink) {
    if (c.encoding() == Chunks.HISTOGRAM) {
      HistogramChunkIterator it = new HistogramChunkIterator(c.bytes());
      while (it.next() && it.timestamp() <= maxt) {
        if (it.timestamp() >= mint) {
          sink.accept(it.timestamp(), it.histogram());
        }
      }
    } else if (c.encoding() == Chunks.FLOAT_HISTOGRAM) {
      FloatHistogramChunkIterator it = new FloatHistogramChunkIterator(c.bytes());
      while (it.next() && it.timestamp() <= maxt) {
        if (it.timestamp() >= mint) {
          sink.accept(it.timestamp(), it.histogram());
        }
      }
    }
  }
}
