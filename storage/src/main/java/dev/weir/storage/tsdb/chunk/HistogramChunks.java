package dev.weir.storage.tsdb.chunk;

/** What the integer and float histogram appenders and iterators share. */
final class HistogramChunks {
  /** Sample count (2 bytes) and the flag byte with the counter-reset header. */
  static final int HEADER_BYTES = 3;
  static final int HEADER_MASK = 0b1100_0000;
  /** A chunk's sample count is an unsigned 16-bit number. */
  static final int MAX_SAMPLES = 0xffff;

  private static final int[] NO_SPANS = new int[0];
  private static final double[] NO_VALUES = new double[0];

  private HistogramChunks() {}

  static int checkMaxSamples(int maxSamples) {
    if (maxSamples < 1 || maxSamples > MAX_SAMPLES) {
      throw new IllegalArgumentException("maxSamples must be 1.." + MAX_SAMPLES + ", got " + maxSamples);
    }
    return maxSamples;
  }

  static int checkHeader(int header, int numSamples) {
    if ((header & ~HEADER_MASK) != 0) {
      throw new IllegalArgumentException("not a counter-reset header: " + header);
    }
    if (numSamples > 1) {
      throw new IllegalStateException("the counter-reset header is fixed after the second sample");
    }
    return header;
  }

  static boolean isStale(NativeHistogram h) {
    return Chunks.isStale(h);
  }

  /** What Prometheus writes for a stale marker: an empty histogram carrying the stale sum. */
  static NativeHistogram emptyWithSum(boolean isFloat, double sum) {
    return new NativeHistogram(isFloat, NativeHistogram.RESET_UNKNOWN, 0, 0, 0, 0, sum, NO_SPANS,
        NO_VALUES, NO_SPANS, NO_VALUES, NO_VALUES);
  }

  /** The header a chunk gets from its first sample's hint (Prometheus' {@code AppendHistogram}). */
  static int headerForFirst(NativeHistogram h) {
    return switch (h.counterResetHint()) {
      case NativeHistogram.RESET_YES -> Chunks.HEADER_RESET;
      case NativeHistogram.RESET_GAUGE -> Chunks.HEADER_GAUGE;
      default -> Chunks.HEADER_UNKNOWN;
    };
  }

  /** The hint a decoded sample carries (Prometheus 3's {@code counterResetHint}). */
  static int hintFor(int header, int indexInChunk) {
    if (header == Chunks.HEADER_GAUGE) {
      return NativeHistogram.RESET_GAUGE;
    }
    // Prometheus says "unknown" for the first sample whatever the header: the chunk before it
    // may be gone (retention, out-of-order), so only the caller can tell.
    return indexInChunk == 0 ? NativeHistogram.RESET_UNKNOWN : NativeHistogram.RESET_NO;
  }

  /**
   * @throws IllegalArgumentException when spans and buckets disagree or the schema is not one
   *     Prometheus knows (-4..8, or -53 for custom buckets)
   */
  static void checkAppendable(NativeHistogram h) {
    String bad = h.checkLayout();
    if (bad != null) {
      throw new IllegalArgumentException("histogram layout: " + bad);
    }
    int s = h.schema();
    if (s != NativeHistogram.CUSTOM_BUCKETS_SCHEMA && (s < -4 || s > 8)) {
      throw new IllegalArgumentException("histogram schema " + s + " is not -4..8 or -53");
    }
  }

  /**
   * Whether {@code h} may follow {@code last} in a chunk with this header: the chunk is not full,
   * both are gauges or both are not, and then (stale markers aside) the layout is the same and, for
   * counters, no reset hint and no count is lower than before.
   */
  static boolean appendable(int header, int numSamples, int maxSamples, int sizeBytes,
      NativeHistogram last, NativeHistogram h) {
    if (numSamples >= maxSamples
        || (sizeBytes >= Chunks.TARGET_HISTOGRAM_CHUNK_BYTES
            && numSamples >= Chunks.MIN_HISTOGRAM_SAMPLES)) {
      return false;
    }
    boolean gauge = header == Chunks.HEADER_GAUGE;
    if (gauge != (h.counterResetHint() == NativeHistogram.RESET_GAUGE)) {
      return false;
    }
    if (!gauge && h.counterResetHint() == NativeHistogram.RESET_YES) {
      return false;
    }
    if (isStale(h)) {
      return true;
    }
    if (isStale(last) || !last.sameLayout(h)) {
      return false;
    }
    return gauge || !isCounterReset(last, h);
  }

  /** Any count of {@code h} lower than the same count of {@code last} (same layout). */
  static boolean isCounterReset(NativeHistogram last, NativeHistogram h) {
    return h.count() < last.count()
        || h.zeroCount() < last.zeroCount()
        || anyLower(last.positiveBuckets(), h.positiveBuckets())
        || anyLower(last.negativeBuckets(), h.negativeBuckets());
  }

  private static boolean anyLower(double[] before, double[] now) {
    for (int i = 0; i < now.length; i++) {
      if (now[i] < before[i]) {
        return true;
      }
    }
    return false;
  }

  /** The float histogram with the same counts as an integer one. */
  static NativeHistogram toFloat(NativeHistogram h) {
    return new NativeHistogram(true, h.counterResetHint(), h.schema(), h.zeroThreshold(),
        h.zeroCount(), h.count(), h.sum(), h.positiveSpans(), h.positiveBuckets(),
        h.negativeSpans(), h.negativeBuckets(), h.customValues());
  }

  /** Absolute integer bucket counts as Prometheus' integer histogram holds them: deltas. */
  static long[] toDeltas(double[] absolute) {
    long[] out = new long[absolute.length];
    long prev = 0;
    for (int i = 0; i < absolute.length; i++) {
      long v = (long) absolute[i];
      out[i] = v - prev;
      prev = v;
    }
    return out;
  }
}
