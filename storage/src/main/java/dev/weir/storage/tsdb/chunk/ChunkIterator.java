package dev.weir.storage.tsdb.chunk;

/**
 * What every chunk iterator offers whatever its encoding: walk the samples and read their
 * timestamps. Get one with {@link Chunks#iterator}; the concrete iterators add the value
 * ({@link XorIterator#value()}, {@link HistogramChunkIterator#histogram()}, ...).
 */
public interface ChunkIterator {
  /** Advances to the next sample; false at the end. A malformed chunk raises IllegalStateException. */
  boolean next();

  long timestamp();

  int numSamples();
}
