package dev.weir.storage.tsdb.head;

/**
 * Settings of a tenant head.
 *
 * @param chunkRangeMillis width of the time windows chunks never cross; the block range (2h)
 * @param samplesPerChunk samples after which a chunk is closed; 120 as in Prometheus, whose
 *     compression is near its best by then
 */
public record HeadConfig(long chunkRangeMillis, int samplesPerChunk) {
  public static final HeadConfig DEFAULT = new HeadConfig(2 * 3600 * 1000L, 120);

  public HeadConfig {
    if (chunkRangeMillis <= 0) {
      throw new IllegalArgumentException("chunk range must be positive: " + chunkRangeMillis);
    }
    if (samplesPerChunk < 1 || samplesPerChunk > 65535) {
      throw new IllegalArgumentException("samples per chunk must be in [1, 65535]: " + samplesPerChunk);
    }
  }
}
