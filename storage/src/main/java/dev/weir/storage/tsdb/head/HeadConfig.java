package dev.weir.storage.tsdb.head;

/**
 * Settings of a tenant head.
 *
 * @param chunkRangeMillis width of the time windows chunks never cross; the block range (2h)
 * @param samplesPerChunk samples after which a chunk is closed; 120 as in Prometheus, whose
 *     compression is near its best by then
 * @param oooCapMax samples an out-of-order chunk buffers (sorted) before it is encoded; 32 as in
 *     Prometheus and Mimir ({@code out-of-order-capacity-max}), at most 255
 */
public record HeadConfig(long chunkRangeMillis, int samplesPerChunk, int oooCapMax) {
  /** Prometheus' and Mimir's default of {@code out_of_order_cap_max}. */
  public static final int DEFAULT_OOO_CAP_MAX = 32;
  public static final HeadConfig DEFAULT = new HeadConfig(2 * 3600 * 1000L, 120);

  public HeadConfig(long chunkRangeMillis, int samplesPerChunk) {
    this(chunkRangeMillis, samplesPerChunk, DEFAULT_OOO_CAP_MAX);
  }

  public HeadConfig {
    if (oooCapMax < 1 || oooCapMax > 255) {
      throw new IllegalArgumentException("out-of-order capacity must be in [1, 255]: " + oooCapMax);
    }
    if (chunkRangeMillis <= 0) {
      throw new IllegalArgumentException("chunk range must be positive: " + chunkRangeMillis);
    }
    if (samplesPerChunk < 1 || samplesPerChunk > 65535) {
      throw new IllegalArgumentException("samples per chunk must be in [1, 65535]: " + samplesPerChunk);
    }
  }
}
