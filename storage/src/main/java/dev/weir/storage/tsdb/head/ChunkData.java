package dev.weir.storage.tsdb.head;

/**
 * An XOR chunk with its inclusive time range. The bytes are never modified after construction.
 */
public record ChunkData(long minTime, long maxTime, byte[] bytes) {}
