package dev.weir.storage.tsdb.chunk;

/**
 * Appends integer native histograms to a chunk in Prometheus' histogram encoding
 * ({@code chunkenc.EncHistogram}, {@link Chunks#HISTOGRAM}), byte for byte what Prometheus writes,
 * so the chunk goes unchanged into a block or a remote-read response.
 *
 * <p>Layout: a 2-byte big-endian sample count, one flag byte whose top two bits are the
 * counter-reset header ({@link #counterResetHeader()}), then a bit stream: the bucket layout
 * ({@link HistogramLayout}) once, then per sample the timestamp, count, zero count and the buckets
 * as varbit integers — raw for the first sample, as deltas of deltas after it — and the sum as a
 * raw float, then XOR-coded. Buckets are coded as Prometheus' integer histogram holds them: each
 * bucket's count minus the previous bucket's of the same side. A stale marker (sum =
 * {@link Chunks#STALE_NAN_BITS}) writes no buckets.
 *
 * <p>{@link #append} refuses (returns false, writes nothing) what this chunk cannot hold: another
 * bucket layout, a counter reset (or a reset hint), a switch between gauge and counter histograms,
 * a sample after a stale marker that is not itself stale, or a full chunk. The caller then starts a
 * new chunk. Prometheus would instead recode the chunk for new buckets; starting a new chunk is
 * also valid Prometheus data, only larger.
 *
 * <p>Not thread-safe: a series appends under its own lock. {@link #bytes()} returns a copy, which
 * readers may decode while appends continue.
 */
public final class HistogramChunkAppender {
  private final BitWriter w;
  private final int maxSamples;

  private int numSamples;
  private int header;
  private long minTime;
  private long t;
  private long tDelta;
  private long cnt;
  private long zCnt;
  private long cntDelta;
  private long zCntDelta;
  private long[] pBuckets = new long[0];
  private long[] nBuckets = new long[0];
  private long[] pBucketsDelta = new long[0];
  private long[] nBucketsDelta = new long[0];
  private final BitWriter.XorState sum = new BitWriter.XorState();
  /** Absolute counts of the last sample, for counter-reset detection. */
  private NativeHistogram last = HistogramChunks.emptyWithSum(false, 0);

  /** A chunk cut like Prometheus' head cuts it: {@link Chunks#DEFAULT_MAX_HISTOGRAM_SAMPLES}. */
  public HistogramChunkAppender() {
    this(Chunks.DEFAULT_MAX_HISTOGRAM_SAMPLES);
  }

  /** @param maxSamples at most this many samples (1..65535) go into the chunk */
  public HistogramChunkAppender(int maxSamples) {
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

  /**
   * Overrides the counter-reset header, as Prometheus does when it cuts a chunk for size and knows
   * there was no reset ({@link Chunks#HEADER_NOT_RESET}). Only before the second sample.
   */
  public void setCounterResetHeader(int counterResetHeader) {
    header = HistogramChunks.checkHeader(counterResetHeader, numSamples);
    w.setByte(2, header);
  }

  /** The last sample appended (absolute counts), or an empty histogram before the first. */
  public NativeHistogram lastHistogram() {
    return last;
  }

  /** Bytes the encoded chunk occupies so far. */
  public int sizeBytes() {
    return w.sizeBytes();
  }

  /** Capacity of the internal buffer (for memory accounting). */
  public int capacityBytes() {
    return w.capacityBytes();
  }

  /** A copy of the encoded chunk as it is now. */
  public byte[] bytes() {
    return w.bytes();
  }

  /**
   * Appends a sample whose timestamp is after {@link #maxTime()} (the caller checks order).
   *
   * @return false, with nothing written, when the sample needs a new chunk (see the class doc)
   * @throws IllegalArgumentException for a float histogram or one whose spans and buckets disagree
   */
  public boolean append(long ts, NativeHistogram h) {
    if (h.isFloat()) {
      throw new IllegalArgumentException("a float histogram goes into a float histogram chunk");
    }
    HistogramChunks.checkAppendable(h);
    boolean stale = HistogramChunks.isStale(h);
    if (numSamples == 0) {
      appendFirst(ts, stale ? HistogramChunks.emptyWithSum(false, h.sum()) : h);
      header = HistogramChunks.headerForFirst(h);
      w.setByte(2, header);
      return true;
    }
    if (!HistogramChunks.appendable(this.header, numSamples, maxSamples, w.sizeBytes(), last, h)) {
      return false;
    }
    appendNext(ts, stale ? HistogramChunks.emptyWithSum(false, h.sum()) : h, stale);
    return true;
  }

  private void appendFirst(long ts, NativeHistogram h) {
    HistogramLayout.of(h).write(w);
    pBuckets = HistogramChunks.toDeltas(h.positiveBuckets());
    nBuckets = HistogramChunks.toDeltas(h.negativeBuckets());
    pBucketsDelta = new long[pBuckets.length];
    nBucketsDelta = new long[nBuckets.length];
    w.writeVarbitInt(ts);
    cnt = (long) h.count();
    zCnt = (long) h.zeroCount();
    w.writeVarbitUint(cnt);
    w.writeVarbitUint(zCnt);
    w.writeDouble(h.sum());
    sum.value = h.sum();
    for (long b : pBuckets) {
      w.writeVarbitInt(b);
    }
    for (long b : nBuckets) {
      w.writeVarbitInt(b);
    }
    minTime = ts;
    t = ts;
    finishAppend(h);
  }

  private void appendNext(long ts, NativeHistogram h, boolean stale) {
    long newTDelta = ts - t;
    long newCnt = (long) h.count();
    long newZCnt = (long) h.zeroCount();
    long newCntDelta = newCnt - cnt;
    long newZCntDelta = newZCnt - zCnt;
    w.writeVarbitInt(newTDelta - tDelta);
    // Prometheus writes no count change for a stale marker: its counts are meaningless.
    w.writeVarbitInt(stale ? 0 : newCntDelta - cntDelta);
    w.writeVarbitInt(stale ? 0 : newZCntDelta - zCntDelta);
    w.writeXor(sum, h.sum());
    if (!stale) {
      writeBucketDods(HistogramChunks.toDeltas(h.positiveBuckets()), pBuckets, pBucketsDelta);
      writeBucketDods(HistogramChunks.toDeltas(h.negativeBuckets()), nBuckets, nBucketsDelta);
    }
    t = ts;
    tDelta = newTDelta;
    cnt = newCnt;
    zCnt = newZCnt;
    cntDelta = newCntDelta;
    zCntDelta = newZCntDelta;
    finishAppend(h);
  }

  private void writeBucketDods(long[] now, long[] prev, long[] prevDelta) {
    for (int i = 0; i < now.length; i++) {
      long delta = now[i] - prev[i];
      w.writeVarbitInt(delta - prevDelta[i]);
      prevDelta[i] = delta;
      prev[i] = now[i];
    }
  }

  private void finishAppend(NativeHistogram h) {
    last = h;
    numSamples++;
    w.setByte(0, numSamples >>> 8);
    w.setByte(1, numSamples);
  }
}
