package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.Chunks;

/**
 * A chunk with its inclusive time range and its Prometheus encoding ({@link Chunks#XOR},
 * {@link Chunks#HISTOGRAM} or {@link Chunks#FLOAT_HISTOGRAM}). The bytes are never modified after
 * construction.
 */
public record ChunkData(long minTime, long maxTime, byte[] bytes, byte encoding) {
  public ChunkData {
    if (!Chunks.isKnown(encoding)) {
      throw new IllegalArgumentException("unknown chunk encoding " + (encoding & 0xff));
    }
  }

  /** An XOR chunk (float samples). */
  public ChunkData(long minTime, long maxTime, byte[] bytes) {
    this(minTime, maxTime, bytes, Chunks.XOR);
  }

  /** Number of samples the chunk's header declares, whatever its encoding. */
  public int numSamples() {
    return Chunks.numSamples(encoding, bytes);
  }

  public boolean isHistogram() {
    return encoding == Chunks.HISTOGRAM || encoding == Chunks.FLOAT_HISTOGRAM;
  }
}
