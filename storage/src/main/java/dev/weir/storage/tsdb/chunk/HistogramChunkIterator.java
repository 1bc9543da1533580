package dev.weir.storage.tsdb.chunk;

/**
 * Decodes a chunk written by {@link HistogramChunkAppender} (or by Prometheus, encoding
 * {@link Chunks#HISTOGRAM}). Usage:
 *
 * <pre>{@code
 * HistogramChunkIterator it = new HistogramChunkIterator(bytes);
 * while (it.next()) {
 *   use(it.timestamp(), it.histogram());
 * }
 * }</pre>
 *
 * <p>{@link #histogram()} returns a new integer {@link NativeHistogram} with absolute counts; its
 * counter-reset hint is Prometheus': gauge in a gauge chunk, otherwise unknown for the first sample
 * and "no reset" after it ({@link #counterResetHeader()} tells how the chunk began). A stale marker
 * comes back as an empty histogram whose sum is the stale NaN. Not thread-safe. A malformed chunk
 * raises {@link IllegalStateException} from {@link #next()}.
 */
public final class HistogramChunkIterator implements ChunkIterator {
  private final BitReader r;
  private final int total;
  private final int header;
  private int read;

  private HistogramLayout layout = HistogramLayout.EMPTY;
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

  public HistogramChunkIterator(byte[] chunk) {
    if (chunk.length < HistogramChunks.HEADER_BYTES) {
      throw new IllegalStateException("histogram chunk shorter than its header");
    }
    this.r = new BitReader(chunk, HistogramChunks.HEADER_BYTES);
    this.total = numSamples(chunk);
    this.header = chunk[2] & HistogramChunks.HEADER_MASK;
  }

  /** Number of samples the chunk header declares. */
  public static int numSamples(byte[] chunk) {
    return Chunks.numSamples(Chunks.HISTOGRAM, chunk);
  }

  @Override
  public int numSamples() {
    return total;
  }

  /** One of {@link Chunks#HEADER_UNKNOWN}, {@code HEADER_RESET}, {@code HEADER_NOT_RESET}, {@code HEADER_GAUGE}. */
  public int counterResetHeader() {
    return header;
  }

  @Override
  public long timestamp() {
    return t;
  }

  /** Advances to the next sample; false at the end. */
  @Override
  public boolean next() {
    if (read >= total) {
      return false;
    }
    if (read == 0) {
      readFirst();
    } else {
      readNext();
    }
    read++;
    return true;
  }

  private void readFirst() {
    layout = HistogramLayout.read(r);
    pBuckets = new long[layout.positiveBucketCount()];
    nBuckets = new long[layout.negativeBucketCount()];
    pBucketsDelta = new long[pBuckets.length];
    nBucketsDelta = new long[nBuckets.length];
    t = r.readVarbitInt();
    cnt = r.readVarbitUint();
    zCnt = r.readVarbitUint();
    sum.value = r.readDouble();
    for (int i = 0; i < pBuckets.length; i++) {
      pBuckets[i] = r.readVarbitInt();
    }
    for (int i = 0; i < nBuckets.length; i++) {
      nBuckets[i] = r.readVarbitInt();
    }
  }

  private void readNext() {
    tDelta += r.readVarbitInt();
    t += tDelta;
    cntDelta += r.readVarbitInt();
    cnt += cntDelta;
    zCntDelta += r.readVarbitInt();
    zCnt += zCntDelta;
    r.readXor(sum);
    if (isStale()) {
      return;
    }
    for (int i = 0; i < pBuckets.length; i++) {
      pBucketsDelta[i] += r.readVarbitInt();
      pBuckets[i] += pBucketsDelta[i];
    }
    for (int i = 0; i < nBuckets.length; i++) {
      nBucketsDelta[i] += r.readVarbitInt();
      nBuckets[i] += nBucketsDelta[i];
    }
  }

  private boolean isStale() {
    return Double.doubleToRawLongBits(sum.value) == Chunks.STALE_NAN_BITS;
  }

  /** The current sample, a new object each call. */
  public NativeHistogram histogram() {
    if (isStale()) {
      return HistogramChunks.emptyWithSum(false, sum.value);
    }
    return new NativeHistogram(false, HistogramChunks.hintFor(header, read - 1), layout.schema(),
        layout.zeroThreshold(), zCnt, cnt, sum.value, layout.positiveSpans().clone(),
        absolute(pBuckets), layout.negativeSpans().clone(), absolute(nBuckets),
        layout.customValues().clone());
  }

  private static double[] absolute(long[] deltas) {
    double[] out = new double[deltas.length];
    long current = 0;
    for (int i = 0; i < deltas.length; i++) {
      current += deltas[i];
      out[i] = current;
    }
    return out;
  }
}
