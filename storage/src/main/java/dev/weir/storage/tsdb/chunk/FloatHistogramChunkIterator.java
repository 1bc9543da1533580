package dev.weir.storage.tsdb.chunk;

/**
 * Decodes a chunk written by {@link FloatHistogramChunkAppender} (or by Prometheus, encoding
 * {@link Chunks#FLOAT_HISTOGRAM}); used like {@link HistogramChunkIterator}, and
 * {@link #histogram()} returns float histograms with the same hint rules. Not thread-safe. A
 * malformed chunk raises {@link IllegalStateException} from {@link #next()}.
 */
public final class FloatHistogramChunkIterator implements ChunkIterator {
  private final BitReader r;
  private final int total;
  private final int header;
  private int read;

  private HistogramLayout layout = HistogramLayout.EMPTY;
  private long t;
  private long tDelta;
  private final BitWriter.XorState cnt = new BitWriter.XorState();
  private final BitWriter.XorState zCnt = new BitWriter.XorState();
  private final BitWriter.XorState sum = new BitWriter.XorState();
  private BitWriter.XorState[] pBuckets = new BitWriter.XorState[0];
  private BitWriter.XorState[] nBuckets = new BitWriter.XorState[0];

  public FloatHistogramChunkIterator(byte[] chunk) {
    if (chunk.length < HistogramChunks.HEADER_BYTES) {
      throw new IllegalStateException("float histogram chunk shorter than its header");
    }
    this.r = new BitReader(chunk, HistogramChunks.HEADER_BYTES);
    this.total = numSamples(chunk);
    this.header = chunk[2] & HistogramChunks.HEADER_MASK;
  }

  /** Number of samples the chunk header declares. */
  public static int numSamples(byte[] chunk) {
    return Chunks.numSamples(Chunks.FLOAT_HISTOGRAM, chunk);
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
    pBuckets = newStates(layout.positiveBucketCount());
    nBuckets = newStates(layout.negativeBucketCount());
    t = r.readVarbitInt();
    cnt.value = r.readDouble();
    zCnt.value = r.readDouble();
    sum.value = r.readDouble();
    for (BitWriter.XorState b : pBuckets) {
      b.value = r.readDouble();
    }
    for (BitWriter.XorState b : nBuckets) {
      b.value = r.readDouble();
    }
  }

  private static BitWriter.XorState[] newStates(int n) {
    BitWriter.XorState[] out = new BitWriter.XorState[n];
    for (int i = 0; i < n; i++) {
      out[i] = new BitWriter.XorState();
    }
    return out;
  }

  private void readNext() {
    tDelta += r.readVarbitInt();
    t += tDelta;
    r.readXor(cnt);
    r.readXor(zCnt);
    r.readXor(sum);
    if (isStale()) {
      return;
    }
    for (BitWriter.XorState b : pBuckets) {
      r.readXor(b);
    }
    for (BitWriter.XorState b : nBuckets) {
      r.readXor(b);
    }
  }

  private boolean isStale() {
    return Double.doubleToRawLongBits(sum.value) == Chunks.STALE_NAN_BITS;
  }

  /** The current sample, a new object each call. */
  public NativeHistogram histogram() {
    if (isStale()) {
      return HistogramChunks.emptyWithSum(true, sum.value);
    }
    return new NativeHistogram(true, HistogramChunks.hintFor(header, read - 1), layout.schema(),
        layout.zeroThreshold(), zCnt.value, cnt.value, sum.value, layout.positiveSpans().clone(),
        values(pBuckets), layout.negativeSpans().clone(), values(nBuckets),
        layout.customValues().clone());
  }

  private static double[] values(BitWriter.XorState[] states) {
    double[] out = new double[states.length];
    for (int i = 0; i < states.length; i++) {
      out[i] = states[i].value;
    }
    return out;
  }
}
