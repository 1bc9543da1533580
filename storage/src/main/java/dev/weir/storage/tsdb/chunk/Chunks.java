package dev.weir.storage.tsdb.chunk;

/**
 * Prometheus' chunk encodings ({@code chunkenc.Encoding}) and what every encoding shares: the
 * first two bytes of a chunk are its big-endian sample count.
 *
 * <p>A chunk's encoding byte travels with its bytes everywhere (head, block segment file,
 * remote read, store-gateway); readers dispatch on it with {@link #numSamples} or the iterators.
 */
public final class Chunks {
  /** Float samples, Gorilla XOR ({@link XorAppender}). */
  public static final byte XOR = 1;
  /** Integer native histograms ({@link HistogramChunkAppender}). */
  public static final byte HISTOGRAM = 2;
  /** Float native histograms ({@link FloatHistogramChunkAppender}). */
  public static final byte FLOAT_HISTOGRAM = 3;

  /** Counter-reset header (top two bits of a histogram chunk's third byte): nothing known. */
  public static final int HEADER_UNKNOWN = 0b0000_0000;
  /** The chunk was cut because of a counter reset. */
  public static final int HEADER_RESET = 0b1000_0000;
  /** The chunk was cut for another reason: its first sample is no reset. */
  public static final int HEADER_NOT_RESET = 0b0100_0000;
  /** The chunk holds gauge histograms, which have no counter resets. */
  public static final int HEADER_GAUGE = 0b1100_0000;

  /** Prometheus' stale marker ({@code value.StaleNaN}); a histogram carries it as its sum. */
  public static final long STALE_NAN_BITS = 0x7ff0000000000002L;

  /**
   * Samples per histogram chunk at most, Prometheus' default {@code samplesPerChunk} (the head cuts
   * float chunks at the same count).
   */
  public static final int DEFAULT_MAX_HISTOGRAM_SAMPLES = 120;
  /**
   * A histogram chunk of at least this many bytes takes no more samples once it has
   * {@link #MIN_HISTOGRAM_SAMPLES} (Prometheus' {@code TargetBytesPerHistogramChunk}).
   */
  public static final int TARGET_HISTOGRAM_CHUNK_BYTES = 1024;
  /** Prometheus' {@code MinSamplesPerHistogramChunk}: big histograms still share a chunk. */
  public static final int MIN_HISTOGRAM_SAMPLES = 10;

  private Chunks() {}

  /** Whether Weir reads chunks of this encoding. */
  public static boolean isKnown(byte encoding) {
    return encoding == XOR || encoding == HISTOGRAM || encoding == FLOAT_HISTOGRAM;
  }

  /** Prometheus' name of the encoding, for errors and tools. */
  public static String name(byte encoding) {
    return switch (encoding) {
      case XOR -> "XOR";
      case HISTOGRAM -> "histogram";
      case FLOAT_HISTOGRAM -> "floathistogram";
      default -> "<unknown encoding " + (encoding & 0xff) + ">";
    };
  }

  /**
   * Number of samples the chunk's header declares.
   *
   * @throws IllegalArgumentException for an unknown encoding or a chunk shorter than its header
   */
  public static int numSamples(byte encoding, byte[] chunk) {
    if (!isKnown(encoding)) {
      throw new IllegalArgumentException("unknown chunk encoding " + (encoding & 0xff));
    }
    if (chunk.length < 2) {
      throw new IllegalArgumentException("chunk of " + chunk.length + " bytes has no header");
    }
    return ((chunk[0] & 0xff) << 8) | (chunk[1] & 0xff);
  }

  /**
   * An iterator over a chunk of the given encoding.
   *
   * @throws IllegalArgumentException for an unknown encoding
   * @throws IllegalStateException for a chunk shorter than its header
   */
  public static ChunkIterator iterator(byte encoding, byte[] chunk) {
    return switch (encoding) {
      case XOR -> new XorIterator(chunk);
      case HISTOGRAM -> new HistogramChunkIterator(chunk);
      case FLOAT_HISTOGRAM -> new FloatHistogramChunkIterator(chunk);
      default -> throw new IllegalArgumentException("unknown chunk encoding " + (encoding & 0xff));
    };
  }

  /** Whether a histogram's sum is Prometheus' stale marker. */
  public static boolean isStale(NativeHistogram h) {
    return Double.doubleToRawLongBits(h.sum()) == STALE_NAN_BITS;
  }
}
