package dev.weir.storage.tsdb.chunk;

/**
 * Appends float native histograms to a chunk in Prometheus' float histogram encoding
 * ({@code chunkenc.EncFloatHistogram}, {@link Chunks#FLOAT_HISTOGRAM}), byte for byte what
 * Prometheus writes.
 *
 * <p>Layout: the same 3-byte header and bucket layout as {@link HistogramChunkAppender}; then the
 * first sample's timestamp as a varbit integer and its count, zero count, sum and absolute bucket
 * counts as raw 64-bit floats; every later sample's timestamp as a varbit delta of deltas and each
 * of those floats XOR-coded against the same field of the previous sample. A stale marker writes
 * count and zero count 0 and no buckets.
 *
 * <p>{@link #append} refuses exactly what {@link HistogramChunkAppender#append} refuses. An integer
 * histogram is stored as its float equivalent. Not thread-safe; {@link #bytes()} returns a copy.
 */
public final class FloatHistogramChunkAppender {
  private final BitWriter w;
  private final int maxSamples;

  private int numSamples;
  private int header;
  private long minTime;
  private long t;
  private long tDelta;
  private final BitWriter.XorState cnt = new BitWriter.XorState();
  private final BitWriter.XorState zCnt = new BitWriter.XorState();
  private final BitWriter.XorState sum = new BitWriter.XorState();
  private BitWriter.XorState[] pBuckets = new BitWriter.XorState[0];
  private BitWriter.XorState[] nBuckets = new BitWriter.XorState[0];
  private NativeHistogram last = HistogramChunks.emptyWithSum(true, 0);

  /** A chunk cut like Prometheus' head cuts it: {@link Chunks#DEFAULT_MAX_HISTOGRAM_SAMPLES}. */
  public FloatHistogramChunkAppender() {
    this(Chunks.DEFAULT_MAX_HISTOGRAM_SAMPLES);
  }

  /** @param maxSamples at most this many samples (1..65535) go into the chunk */
  public FloatHistogramChunkAppender(int maxSamples) {
    this.maxSamples = HistogramChunks.checkMaxSamples(maxSamples);
    this.w = new BitWriter(HistogramChunks.HEADER_BYTES, 64);
  }

  public int numSamples() {
    return numSamples;
  }

  public long minTime() {
    return minTime;
  }

  public long maxTime() {
    return t;
  }

  /** One of {@link Chunks#HEADER_UNKNOWN}, {@code HEADER_RESET}, {@code HEADER_NOT_RESET}, {@code HEADER_GAUGE}. */
  public int counterResetHeader() {
    return header;
  }

  /** See {@link HistogramChunkAppender#setCounterResetHeader}. */
  public void setCounterResetHeader(int counterResetHeader) {
    header = HistogramChunks.checkHeader(counterResetHeader, numSamples);
    w.setByte(2, header);
  }

  /** The last sample appended (as a float histogram), or an empty histogram before the first. */
  public NativeHistogram lastHistogram() {
    return last;
  }

  public int sizeBytes() {
    return w.sizeBytes();
  }

  public int capacityBytes() {
    return w.capacityBytes();
  }

  public byte[] bytes() {
    return w.bytes();
  }

  /**
   * Appends a sample whose timestamp is after {@link #maxTime()} (the caller checks order).
   *
   * @return false, with nothing written, when the sample needs a new chunk
   * @throws IllegalArgumentException for a histogram whose spans and buckets disagree
   */
  public boolean append(long ts, NativeHistogram in) {
    HistogramChunks.checkAppendable(in);
    NativeHistogram h = in.isFloat() ? in : HistogramChunks.toFloat(in);
    boolean stale = HistogramChunks.isStale(h);
    NativeHistogram stored = stale ? HistogramChunks.emptyWithSum(true, h.sum()) : h;
    if (numSamples == 0) {
      appendFirst(ts, stored);
      header = HistogramChunks.headerForFirst(h);
      w.setByte(2, header);
      return true;
    }
    if (!HistogramChunks.appendable(header, numSamples, maxSamples, w.sizeBytes(), last, h)) {
      return false;
    }
    appendNext(ts, stored);
    return true;
  }

  private void appendFirst(long ts, NativeHistogram h) {
    HistogramLayout.of(h).write(w);
    w.writeVarbitInt(ts);
    writeRaw(cnt, h.count());
    writeRaw(zCnt, h.zeroCount());
    writeRaw(sum, h.sum());
    pBuckets = new BitWriter.XorState[h.positiveBuckets().length];
    nBuckets = new BitWriter.XorState[h.negativeBuckets().length];
    for (int i = 0; i < pBuckets.length; i++) {
      pBuckets[i] = new BitWriter.XorState();
      writeRaw(pBuckets[i], h.positiveBuckets()[i]);
    }
    for (int i = 0; i < nBuckets.length; i++) {
      nBuckets[i] = new BitWriter.XorState();
      writeRaw(nBuckets[i], h.negativeBuckets()[i]);
    }
    minTime = ts;
    t = ts;
    finishAppend(h);
  }

  private void writeRaw(BitWriter.XorState state, double v) {
    w.writeDouble(v);
    state.value = v;
  }

  private void appendNext(long ts, NativeHistogram h) {
    long newTDelta = ts - t;
    w.writeVarbitInt(newTDelta - tDelta);
    w.writeXor(cnt, h.count());
    w.writeXor(zCnt, h.zeroCount());
    w.writeXor(sum, h.sum());
    double[] pos = h.positiveBuckets();
    for (int i = 0; i < pos.length; i++) {
      w.writeXor(pBuckets[i], pos[i]);
    }
    double[] neg = h.negativeBuckets();
    for (int i = 0; i < neg.length; i++) {
      w.writeXor(nBuckets[i], neg[i]);
    }
    t = ts;
    tDelta = newTDelta;
    finishAppend(h);
  }

  private void finishAppend(NativeHistogram h) {
    last = h;
    numSamples++;
    w.setByte(0, numSamples >>> 8);
    w.setByte(1, numSamples);
  }
}
