package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One series in a tenant head: its labels, its completed chunks and the chunk being appended to.
 *
 * <p>Thread-safety: sample data is guarded by this object's monitor. Appends additionally happen
 * only under the head's append lock, which also guards the {@code pending*} fields used to check a
 * batch before it is logged and applied.
 */
public final class MemSeries {
  private static final byte[][] NO_CHUNKS = new byte[0][];
  private static final long[] NO_TIMES = new long[0];

  private final Labels labels;
  private final int ref;

  private byte[][] chunks = NO_CHUNKS;
  private long[] chunkMinT = NO_TIMES;
  private long[] chunkMaxT = NO_TIMES;
  private int numChunks;
  private @Nullable XorAppender head;
  /** End (exclusive) of the chunk range the head chunk belongs to. */
  private long headChunkEnd;

  private long maxT = Long.MIN_VALUE;
  private long lastValueBits;
  private int numSamples;
  private volatile long lastAppendWallMillis;

  // Guarded by the head's append lock.
  long pendingTxn;
  long pendingT;
  long pendingValueBits;
  /** The commit that last queued this series' record for the WAL (dedup within one commit). */
  long seriesTxn;
  /** Whether the series record is in the WAL (then samples may reference the ref). */
  boolean logged;
  /** Set when truncation removed the series; an appender holding it must look it up again. */
  volatile boolean removed;
  /** Out-of-order samples, or null before the first (guarded by this monitor). */
  private @Nullable OooSeries ooo;

  MemSeries(Labels labels, int ref) {
    this.labels = labels;
    this.ref = ref;
  }

  public Labels labels() {
    return labels;
  }

  public int ref() {
    return ref;
  }

  /** Wall-clock time of the last accepted sample, for the active-series count. */
  public long lastAppendWallMillis() {
    return lastAppendWallMillis;
  }

  synchronized long maxTime() {
    return maxT;
  }

  synchronized long lastValueBits() {
    return lastValueBits;
  }

  synchronized boolean hasSamples() {
    return numSamples > 0;
  }

  synchronized int numSamples() {
    return numSamples;
  }

  /** Whether the series holds any sample, in order or out of order. */
  synchronized boolean hasAnySamples() {
    return numSamples > 0 || (ooo != null && !ooo.isEmpty());
  }

  /** Whether the series holds out-of-order samples. */
  synchronized boolean hasOoo() {
    return ooo != null && !ooo.isEmpty();
  }

  /** Stores an out-of-order sample whose timestamp the series does not hold (checked by the head). */
  synchronized void appendOoo(long t, double v, int capMax, long wallMillis) {
    if (ooo == null) {
      ooo = new OooSeries(capMax);
    }
    ooo.insert(t, v, capMax);
    lastAppendWallMillis = wallMillis;
  }

  /** The out-of-order chunks overlapping {@code [mint, maxt]}, added to {@code out}. */
  synchronized void oooChunks(long mint, long maxt, List<ChunkData> out) {
    if (ooo != null) {
      ooo.chunks(mint, maxt, out);
    }
  }

  /** {@link SampleLookup} result for timestamp {@code t} over in-order and out-of-order samples. */
  synchronized int lookup(long t, long valueBits) {
    int r = ooo == null ? SampleLookup.ABSENT : ooo.lookup(t, valueBits);
    if (r != SampleLookup.ABSENT) {
      return r;
    }
    for (int i = 0; i < numChunks; i++) {
      if (chunkMinT[i] <= t && t <= chunkMaxT[i]) {
        r = SampleLookup.inChunk(chunks[i], t, valueBits);
        if (r != SampleLookup.ABSENT) {
          return r;
        }
      }
    }
    XorAppender h = head;
    return h != null && h.numSamples() > 0 && h.minTime() <= t && t <= h.maxTime()
        ? SampleLookup.inChunk(h.bytes(), t, valueBits) : SampleLookup.ABSENT;
  }

  /** Seals the out-of-order chunks for compaction (see {@link OooSeries#seal()}); empty if none. */
  synchronized List<ChunkData> sealOoo() {
    return ooo == null ? List.of() : ooo.seal();
  }

  /** Drops the chunks {@link #sealOoo()} returned. */
  synchronized void dropSealedOoo() {
    if (ooo != null) {
      ooo.dropSealed();
      if (ooo.isEmpty()) {
        ooo = null;
      }
    }
  }

  synchronized long minTime() {
    if (numChunks > 0) {
      return chunkMinT[0];
    }
    return head == null ? Long.MAX_VALUE : head.minTime();
  }

  /**
   * Appends a sample already checked to be newer than {@link #maxTime()}. A new chunk is cut after
   * {@code samplesPerChunk} samples or when the sample falls into the next {@code chunkRange}
   * window, so no chunk crosses a block boundary.
   */
  synchronized void append(long t, double v, int samplesPerChunk, long chunkRange, long wallMillis) {
    XorAppender h = head;
    if (h == null || h.numSamples() >= samplesPerChunk || t >= headChunkEnd) {
      if (h != null) {
        closeHeadChunk(h);
      }
      h = new XorAppender();
      head = h;
      headChunkEnd = Math.floorDiv(t, chunkRange) * chunkRange + chunkRange;
    }
    h.append(t, v);
    maxT = t;
    lastValueBits = Double.doubleToRawLongBits(v);
    numSamples++;
    lastAppendWallMillis = wallMillis;
  }

  private void closeHeadChunk(XorAppender h) {
    if (numChunks == chunks.length) {
      int n = Math.max(4, numChunks * 2);
      chunks = Arrays.copyOf(chunks, n);
      chunkMinT = Arrays.copyOf(chunkMinT, n);
      chunkMaxT = Arrays.copyOf(chunkMaxT, n);
    }
    chunks[numChunks] = h.bytes();
    chunkMinT[numChunks] = h.minTime();
    chunkMaxT[numChunks] = h.maxTime();
    numChunks++;
  }

  /**
   * The chunks overlapping {@code [mint, maxt]}, oldest first. Completed chunks are shared
   * (immutable); the head chunk is copied.
   */
  synchronized List<ChunkData> chunks(long mint, long maxt) {
    List<ChunkData> out = new ArrayList<>(numChunks + 1);
    for (int i = 0; i < numChunks; i++) {
      if (chunkMaxT[i] >= mint && chunkMinT[i] <= maxt) {
        out.add(new ChunkData(chunkMinT[i], chunkMaxT[i], chunks[i]));
      }
    }
    XorAppender h = head;
    if (h != null && h.numSamples() > 0 && h.maxTime() >= mint && h.minTime() <= maxt) {
      out.add(new ChunkData(h.minTime(), h.maxTime(), h.bytes()));
    }
    return out;
  }

  /**
   * Whether the series holds a sample at {@code t} whose value has exactly these bits: an older
   * sample sent again (a Kafka record re-read after a restart) is then an idempotent duplicate,
   * not out of order. Decodes only the chunk covering {@code t}; called only for samples older
   * than the newest, which are rare.
   */
  synchronized boolean holds(long t, long valueBits) {
    for (int i = 0; i < numChunks; i++) {
      if (chunkMinT[i] <= t && t <= chunkMaxT[i] && chunkHolds(chunks[i], t, valueBits)) {
        return true;
      }
    }
    XorAppender h = head;
    return h != null && h.numSamples() > 0 && h.minTime() <= t && t <= h.maxTime()
        && chunkHolds(h.bytes(), t, valueBits);
  }

  private static boolean chunkHolds(byte[] chunk, long t, long valueBits) {
    dev.weir.storage.tsdb.chunk.XorIterator it = new dev.weir.storage.tsdb.chunk.XorIterator(chunk);
    while (it.next()) {
      if (it.timestamp() == t) {
        return Double.doubleToRawLongBits(it.value()) == valueBits;
      }
      if (it.timestamp() > t) {
        return false;
      }
    }
    return false;
  }

  /**
   * Drops chunks whose samples are all older than {@code before}.
   *
   * @return whether the series holds no sample any more
   */
  synchronized boolean dropChunksBefore(long before) {
    int keepFrom = 0;
    while (keepFrom < numChunks && chunkMaxT[keepFrom] < before) {
      numSamples -= dev.weir.storage.tsdb.chunk.XorIterator.numSamples(chunks[keepFrom]);
      keepFrom++;
    }
    if (keepFrom > 0) {
      int left = numChunks - keepFrom;
      System.arraycopy(chunks, keepFrom, chunks, 0, left);
      System.arraycopy(chunkMinT, keepFrom, chunkMinT, 0, left);
      System.arraycopy(chunkMaxT, keepFrom, chunkMaxT, 0, left);
      java.util.Arrays.fill(chunks, left, numChunks, null);
      numChunks = left;
    }
    XorAppender h = head;
    if (numChunks == 0 && h != null && h.maxTime() < before) {
      numSamples -= h.numSamples();
      head = null;
    }
    return numChunks == 0 && head == null && (ooo == null || ooo.isEmpty());
  }

  /** Bytes held by sample data (chunks plus head-chunk buffer). */
  synchronized long chunkBytes() {
    long n = 0;
    for (int i = 0; i < numChunks; i++) {
      n += chunks[i].length;
    }
    if (ooo != null) {
      n += ooo.bytes();
    }
    XorAppender h = head;
    return h == null ? n : n + h.capacityBytes();
  }

  @Override
  public String toString() {
    return labels.toString();
  }
}
