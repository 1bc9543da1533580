package dev.weir.storage.tsdb.head;

/**
 * A chunk with its inclusive time range and encoding ({@link dev.weir.storage.tsdb.chunk.Chunks}:
 * XOR, histogram or float histogram). The bytes are never modified after construction.
 */
public record ChunkData(long minTime, long maxTime, byte[] bytes, byte encoding) {
  /** An XOR chunk. */
  public ChunkData(long minTime, long maxTime, byte[] bytes) {
    this(minTime, maxTime, bytes, dev.weir.storage.tsdb.chunk.Chunks.XOR);
  }
}
