package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.chunk.XorChunkBase;
import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One series in a tenant head: its labels, its completed chunks and the chunk being appended to.
 * A float head chunk is this object's own fields ({@link XorChunkBase}), which also hold the
 * newest sample's time and value bits.
 *
 * <p>Thread-safety: sample data is guarded by this object's monitor. Appends additionally happen
 * only under the head's append lock, which also guards the {@code mark*} fields used to check a
 * batch before it is logged and applied.
 */
public final class MemSeries extends XorChunkBase {
  private static final byte[][] NO_CHUNKS = new byte[0][];
  private static final long[] NO_TIMES = new long[0];
  /** 2020-01-01T00:00:00Z in seconds since 1970. */
  static final long WALL_EPOCH_SECOND = 1_577_836_800L;

  /**
   * The labels in {@link CompactLabels}' form only (names and shared values as numbers of the
   * process' dictionaries): the strings live once in the head's postings and the dictionaries, so
   * a series keeps no {@code String[]} or {@link Labels} of its own; {@link #labels()} decodes.
   * Replaced once, by a form of the same labels with value numbers ({@link #numberValues}), for a
   * series a WAL replay made; read through {@link #labelBytes()} (acquire: the new array's bytes
   * are visible with it).
   */
  private byte[] labelBytes;
  private static final java.lang.invoke.VarHandle LABEL_BYTES;

  static {
    try {
      LABEL_BYTES = java.lang.invoke.MethodHandles.lookup().findVarHandle(MemSeries.class, "labelBytes", byte[].class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
  /** {@link Labels#hashCode()} of the labels. */
  private final int labelsHash;
  private final int ref;

  private byte[][] chunks = NO_CHUNKS;
  /** Per completed chunk its oldest and newest sample time, at {@code 2i} and {@code 2i + 1}. */
  private long[] chunkTimes = NO_TIMES;
  private int numChunks;
  /** What only histogram and out-of-order series need, or null until one of them is set. */
  private @Nullable Rare rare;
  /** End (exclusive) of the chunk range the head chunk belongs to. */
  private long headChunkEnd;

  private int numSamples;
  /**
   * The wall-clock second of the last accepted sample, rounded up, counted from
   * {@link #WALL_EPOCH_SECOND} (an int of seconds instead of a long of milliseconds: 2020 to 2088).
   * Written under the monitor, read without it by the active-series count, which is approximate:
   * an int is never torn, and a count that sees a second-old value is as good (not volatile: no
   * fence on every append).
   */
  private int lastAppendWallSecond = Integer.MIN_VALUE;

  // Guarded by the head's append lock.
  /**
   * The commit that last marked this series: while it checks its batch, {@link #markIndex} is the
   * batch index of the series' latest accepted sample (the pending newest: its time, value and
   * histogram are read from the batch, not copied here); while it logs, {@link #QUEUED} says the
   * series record is already queued for the WAL.
   */
  long markTxn;
  int markIndex;
  static final int QUEUED = -1;
  /** Whether the series record is in the WAL (then samples may reference the ref). */
  boolean logged;
  /** Set when truncation removed the series; an appender holding it must look it up again. */
  volatile boolean removed;

  /**
   * The fields of histogram and out-of-order series, one object for the few series that need
   * them instead of four references in every series (guarded by the series' monitor).
   */
  private static final class Rare {
    /** Per completed chunk its encoding (Chunks.XOR, HISTOGRAM, FLOAT_HISTOGRAM); null while all are XOR. */
    byte @Nullable [] chunkEnc;
    /** The histogram chunk being appended to; at most one of the float head chunk and this holds samples. */
    @Nullable HistogramHead histHead;
    /** The newest sample when it is a histogram (as received), else null. */
    @Nullable NativeHistogram lastHistogram;
    /** Out-of-order samples, or null before the first. */
    @Nullable OooSeries ooo;
  }

  /** Heap bytes of a {@link Rare}: header and four references. */
  static final long RARE_BYTES = 32;

  private Rare rare() {
    Rare r = rare;
    if (r == null) {
      r = new Rare();
      rare = r;
    }
    return r;
  }

  private byte @Nullable [] chunkEnc() {
    Rare r = rare;
    return r == null ? null : r.chunkEnc;
  }

  private @Nullable HistogramHead histHead() {
    Rare r = rare;
    return r == null ? null : r.histHead;
  }

  private @Nullable OooSeries ooo() {
    Rare r = rare;
    return r == null ? null : r.ooo;
  }

  /** The wall-clock second {@code wallMillis} falls in, rounded up, from {@link #WALL_EPOCH_SECOND}. */
  static int wallSecond(long wallMillis) {
    long s = Math.floorDiv(wallMillis, 1000) + (Math.floorMod(wallMillis, 1000) == 0 ? 0 : 1) - WALL_EPOCH_SECOND;
    return (int) Math.max(Integer.MIN_VALUE + 1, Math.min(Integer.MAX_VALUE, s));
  }

  MemSeries(Labels labels, int ref) {
    this(labels, ref, null);
  }

  /** A series of {@code labels}; {@code recent} as {@link CompactLabels#fromCanonical}'s. */
  MemSeries(Labels labels, int ref, int @Nullable [] recent) {
    this(CompactLabels.fromCanonical(labels.encoded().wireEncoding(), recent), labels.hashCode(), ref);
  }

  /**
   * A series of the labels encoded in {@code canonical} ({@link Labels#withWireEncoding}), whose
   * {@link Labels#hashCode()} is {@code hash}; {@code recent} as {@link CompactLabels#fromCanonical}'s.
   */
  static MemSeries ofCanonical(byte[] canonical, int hash, int ref, int @Nullable [] recent) {
    return new MemSeries(CompactLabels.fromCanonical(canonical, recent), hash, ref);
  }

  /** A series of labels already in {@link CompactLabels}' form (made in this process). */
  static MemSeries ofCompact(byte[] compact, int hash, int ref) {
    return new MemSeries(compact, hash, ref);
  }

  private MemSeries(byte[] compact, int hash, int ref) {
    this.labelBytes = compact;
    this.labelsHash = hash;
    this.ref = ref;
  }

  /**
   * The series' labels, decoded anew on every call (new value strings, not the postings' ones):
   * for queries, messages and blocks, not for loops over every series of a write path.
   */
  public Labels labels() {
    return CompactLabels.decode(labelBytes(), labelsHash);
  }

  /** The labels in {@link CompactLabels}' form, what lookups compare; callers must not modify it. */
  byte[] labelBytes() {
    return (byte[]) LABEL_BYTES.getAcquire(this);
  }

  /**
   * Gives the series the form of its labels with value numbers ({@link
   * CompactLabels#withValueNumbers}) when it has values in full that the value dictionary takes: a
   * WAL replay makes series with every value in full (numbering them there would slow the replay
   * by ~15 %), and the index build that follows it calls this. Readers see either form, both of
   * the same labels. One caller at a time per series.
   */
  void numberValues() {
    byte[] w = labelBytes();
    byte[] numbered = CompactLabels.withValueNumbers(w);
    if (numbered != w) {
      LABEL_BYTES.setRelease(this, numbered);
    }
  }

  int labelsHash() {
    return labelsHash;
  }

  /** The number of labels. */
  int labelCount() {
    return CompactLabels.count(labelBytes());
  }

  /** The value of one label ({@code name} as UTF-8), or null; decodes only that value. */
  @Nullable String labelValue(byte[] name) {
    return CompactLabels.value(labelBytes(), name);
  }

  /**
   * Reads the label bytes' every cache line and the byte the next float append writes to, without
   * the lock: {@link SeriesMap#warm} loads what a lookup and an append will touch, ahead of them.
   */
  int warm() {
    // An opaque read: a hint needs no ordering (an acquire load could keep the caller's loop of
    // independent loads from overlapping on weakly ordered processors); it may see no array yet.
    byte[] w = (byte[]) LABEL_BYTES.getOpaque(this);
    if (w == null) {
      return 0;
    }
    int x = labelsHash;
    for (int i = 0; i < w.length; i += 64) {
      x += w[i];
    }
    return x + xorTouch();
  }

  public int ref() {
    return ref;
  }

  /**
   * Wall-clock time of the last accepted sample, for the active-series count, rounded up to the
   * second ({@code Long.MIN_VALUE} before the first).
   */
  public long lastAppendWallMillis() {
    int s = lastAppendWallSecond;
    return s == Integer.MIN_VALUE ? Long.MIN_VALUE : (s + WALL_EPOCH_SECOND) * 1000;
  }

  synchronized long maxTime() {
    return lastTime;
  }

  synchronized long lastValueBits() {
    return lastBits;
  }

  /** The newest sample's histogram, or null when it is a float sample (or there is none). */
  synchronized @Nullable NativeHistogram lastHistogram() {
    return lastHistogramLocked();
  }

  synchronized boolean hasSamples() {
    return numSamples > 0;
  }

  // The same four for a caller that holds this series' monitor (a commit reads them under one
  // lock instead of four: each uncontended lock is an atomic instruction or two).

  long maxTimeLocked() {
    return lastTime;
  }

  long lastValueBitsLocked() {
    return lastBits;
  }

  @Nullable NativeHistogram lastHistogramLocked() {
    Rare r = rare;
    return r == null ? null : r.lastHistogram;
  }

  boolean hasSamplesLocked() {
    return numSamples > 0;
  }

  synchronized int numSamples() {
    return numSamples;
  }

  /** Whether the series holds any sample, in order or out of order. */
  synchronized boolean hasAnySamples() {
    OooSeries ooo = ooo();
    return numSamples > 0 || (ooo != null && !ooo.isEmpty());
  }

  /** Whether the series holds out-of-order samples. */
  synchronized boolean hasOoo() {
    return hasOooLocked();
  }

  /** {@link #hasOoo} for a caller that holds this series' monitor. */
  boolean hasOooLocked() {
    OooSeries ooo = ooo();
    return ooo != null && !ooo.isEmpty();
  }

  /** Stores an out-of-order sample whose timestamp the series does not hold (checked by the head). */
  synchronized void appendOoo(long t, double v, int capMax, long wallMillis) {
    Rare r = rare();
    if (r.ooo == null) {
      r.ooo = new OooSeries(capMax);
    }
    r.ooo.insert(t, v, capMax);
    lastAppendWallSecond = wallSecond(wallMillis);
  }

  /** The out-of-order chunks overlapping {@code [mint, maxt]}, added to {@code out}. */
  synchronized void oooChunks(long mint, long maxt, List<ChunkData> out) {
    OooSeries ooo = ooo();
    if (ooo != null) {
      ooo.chunks(mint, maxt, out);
    }
  }

  /** {@link SampleLookup} result for timestamp {@code t} over in-order and out-of-order samples. */
  synchronized int lookup(long t, long valueBits) {
    OooSeries ooo = ooo();
    int r = ooo == null ? SampleLookup.ABSENT : ooo.lookup(t, valueBits);
    if (r != SampleLookup.ABSENT) {
      return r;
    }
    for (int i = 0; i < numChunks; i++) {
      if (chunkTimes[2 * i] <= t && t <= chunkTimes[2 * i + 1]) {
        r = SampleLookup.inChunk(chunks[i], t, valueBits);
        if (r != SampleLookup.ABSENT) {
          return r;
        }
      }
    }
    return xorSamples() > 0 && xorMinTime() <= t && t <= lastTime
        ? SampleLookup.inChunk(xorBytes(), t, valueBits) : SampleLookup.ABSENT;
  }

  /** Seals the out-of-order chunks for compaction (see {@link OooSeries#seal()}); empty if none. */
  synchronized List<ChunkData> sealOoo() {
    OooSeries ooo = ooo();
    return ooo == null ? List.of() : ooo.seal();
  }

  /** Drops the chunks {@link #sealOoo()} returned. */
  synchronized void dropSealedOoo() {
    OooSeries ooo = ooo();
    if (ooo != null) {
      ooo.dropSealed();
      if (ooo.isEmpty()) {
        rare.ooo = null;
      }
    }
  }

  synchronized long minTime() {
    if (numChunks > 0) {
      return chunkTimes[0];
    }
    HistogramHead hh = histHead();
    if (hh != null) {
      return hh.minTime();
    }
    return xorSamples() == 0 ? Long.MAX_VALUE : xorMinTime();
  }

  /**
   * The oldest in-order sample time held; when none is (compacted away, the series kept by its
   * out-of-order samples) the newest one's + 1, since every in-order sample up to it is in a
   * block; {@code Long.MIN_VALUE} for a series that never held one (a commit may have logged its
   * first sample and not applied it yet).
   */
  synchronized long heldFrom() {
    return numSamples > 0 ? minTime() : lastTime == Long.MIN_VALUE ? Long.MIN_VALUE : lastTime + 1;
  }

  /**
   * Appends a sample already checked to be newer than {@link #maxTime()}. A new chunk is cut after
   * {@code samplesPerChunk} samples or when the sample falls into the next {@code chunkRange}
   * window, so no chunk crosses a block boundary.
   */
  synchronized void append(long t, double v, int samplesPerChunk, long chunkRange, long wallMillis) {
    appendLocked(t, v, samplesPerChunk, chunkRange, wallMillis);
  }

  /**
   * A WAL replay's append: the sample is skipped when the series holds one at or after its time
   * (one lock for the check and the append).
   *
   * @return whether it was appended
   */
  synchronized boolean appendIfNewer(long t, double v, int samplesPerChunk, long chunkRange, long wallMillis) {
    if (numSamples > 0 && t <= lastTime) {
      return false;
    }
    appendLocked(t, v, samplesPerChunk, chunkRange, wallMillis);
    return true;
  }

  private void appendLocked(long t, double v, int samplesPerChunk, long chunkRange, long wallMillis) {
    Rare rare = this.rare;
    if (rare != null) {
      if (rare.histHead != null) {
        closeHistogramChunk(); // a float after histograms starts an XOR chunk
      }
      rare.lastHistogram = null;
    }
    int n = xorSamples();
    if (n == 0 || n >= samplesPerChunk || t >= headChunkEnd) {
      if (n > 0) {
        closeHeadChunk();
        xorRelease(); // a new chunk grows from a small buffer again: a kept one would hold its peak
      }
      headChunkEnd = Math.floorDiv(t, chunkRange) * chunkRange + chunkRange;
    }
    xorAppend(t, v); // sets lastTime and lastBits
    numSamples++;
    lastAppendWallSecond = wallSecond(wallMillis);
  }

  /**
   * Appends a histogram sample already checked to be newer than {@link #maxTime()}: to the
   * histogram chunk, cutting a new one after a float sample, in the next {@code chunkRange} window,
   * or when the chunk appender turns the sample down.
   */
  synchronized void appendHistogram(long t, NativeHistogram v, int samplesPerChunk, long chunkRange, long wallMillis) {
    if (xorSamples() > 0) {
      closeHeadChunk();
      xorRelease();
    }
    Rare rare = rare();
    HistogramHead h = rare.histHead;
    if (h == null || t >= headChunkEnd || !h.append(t, v)) {
      closeHistogramChunk();
      h = HistogramHead.forSample(v, samplesPerChunk);
      rare.histHead = h;
      headChunkEnd = Math.floorDiv(t, chunkRange) * chunkRange + chunkRange;
      if (!h.append(t, v)) {
        throw new IllegalStateException("an empty histogram chunk refused its first sample");
      }
    }
    lastTime = t;
    lastBits = 0;
    rare.lastHistogram = v;
    numSamples++;
    lastAppendWallSecond = wallSecond(wallMillis);
  }

  private void closeHistogramChunk() {
    HistogramHead h = histHead();
    if (h != null) {
      rare.histHead = null;
      if (h.numSamples() > 0) {
        addChunk(h.bytes(), h.minTime(), h.maxTime(), h.encoding());
      }
    }
  }

  private void addChunk(byte[] bytes, long min, long max, byte encoding) {
    if (numChunks == chunks.length) {
      int n = Math.max(4, numChunks * 2);
      chunks = Arrays.copyOf(chunks, n);
      chunkTimes = Arrays.copyOf(chunkTimes, 2 * n);
    }
    byte[] enc = chunkEnc();
    if (enc == null && encoding != Chunks.XOR) {
      enc = new byte[chunks.length];
      Arrays.fill(enc, Chunks.XOR);
    } else if (enc != null && enc.length < chunks.length) {
      int old = enc.length;
      enc = Arrays.copyOf(enc, chunks.length);
      Arrays.fill(enc, old, enc.length, Chunks.XOR);
    }
    if (enc != null) {
      rare().chunkEnc = enc;
      enc[numChunks] = encoding;
    }
    chunks[numChunks] = bytes;
    chunkTimes[2 * numChunks] = min;
    chunkTimes[2 * numChunks + 1] = max;
    numChunks++;
  }

  private byte encodingOf(int i) {
    byte[] enc = chunkEnc();
    return enc == null ? Chunks.XOR : enc[i];
  }

  private void closeHeadChunk() {
    addChunk(xorBytes(), xorMinTime(), lastTime, Chunks.XOR);
  }


  /**
   * The chunks overlapping {@code [mint, maxt]}, oldest first. Completed chunks are shared
   * (immutable); the head chunk is copied.
   */
  synchronized List<ChunkData> chunks(long mint, long maxt) {
    List<ChunkData> out = new ArrayList<>(numChunks + 1);
    for (int i = 0; i < numChunks; i++) {
      if (chunkTimes[2 * i + 1] >= mint && chunkTimes[2 * i] <= maxt) {
        out.add(new ChunkData(chunkTimes[2 * i], chunkTimes[2 * i + 1], chunks[i], encodingOf(i)));
      }
    }
    HistogramHead hh = histHead();
    if (hh != null && hh.numSamples() > 0 && hh.maxTime() >= mint && hh.minTime() <= maxt) {
      out.add(new ChunkData(hh.minTime(), hh.maxTime(), hh.bytes(), hh.encoding()));
    }
    if (xorSamples() > 0 && lastTime >= mint && xorMinTime() <= maxt) {
      out.add(new ChunkData(xorMinTime(), lastTime, xorBytes()));
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
      if (chunkTimes[2 * i] <= t && t <= chunkTimes[2 * i + 1] && encodingOf(i) == Chunks.XOR
          && chunkHolds(chunks[i], t, valueBits)) {
        return true;
      }
    }
    return xorSamples() > 0 && xorMinTime() <= t && t <= lastTime
        && chunkHolds(xorBytes(), t, valueBits);
  }

  /**
   * Whether the series holds the histogram {@code h} at {@code t} (reset hint aside, see
   * {@link HistogramHead#sameValue}); the histogram twin of {@link #holds}.
   */
  synchronized boolean holdsHistogram(long t, NativeHistogram h) {
    for (int i = 0; i < numChunks; i++) {
      if (chunkTimes[2 * i] <= t && t <= chunkTimes[2 * i + 1] && encodingOf(i) != Chunks.XOR) {
        NativeHistogram got = HistogramHead.at(encodingOf(i), chunks[i], t);
        if (got != null) {
          return HistogramHead.sameValue(got, h);
        }
      }
    }
    HistogramHead hh = histHead();
    if (hh != null && hh.numSamples() > 0 && hh.minTime() <= t && t <= hh.maxTime()) {
      NativeHistogram got = HistogramHead.at(hh.encoding(), hh.bytes(), t);
      return got != null && HistogramHead.sameValue(got, h);
    }
    return false;
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
   * Adds to {@code out}, oldest first, exactly the in-order chunks that
   * {@link #dropChunksBefore dropChunksBefore(before)} would drop. The chunk being appended to
   * qualifies only when every sample of the series is older than {@code before}; it is then closed
   * first, so a sample appended later starts a new chunk instead of extending one that is being
   * written to a block (which the truncation would then keep, its older samples held twice).
   */
  synchronized void chunksBefore(long before, List<ChunkData> out) {
    int i = 0;
    while (i < numChunks && chunkTimes[2 * i + 1] < before) {
      i++;
    }
    if (i == numChunks) {
      HistogramHead hh = histHead();
      if (hh != null && hh.numSamples() > 0 && hh.maxTime() < before) {
        closeHistogramChunk();
      }
      if (xorSamples() > 0 && lastTime < before) {
        closeHeadChunk();
        xorRelease();
      }
    }
    for (int j = 0; j < numChunks && chunkTimes[2 * j + 1] < before; j++) {
      out.add(new ChunkData(chunkTimes[2 * j], chunkTimes[2 * j + 1], chunks[j], encodingOf(j)));
    }
  }

  /**
   * The chunk bytes {@link #dropChunksBefore dropChunksBefore(before)} would free, negated when
   * it would leave the series without any sample (then the whole series goes).
   */
  synchronized long bytesBefore(long before) {
    long n = 0;
    int i = 0;
    while (i < numChunks && chunkTimes[2 * i + 1] < before) {
      n += chunks[i].length;
      i++;
    }
    if (i < numChunks) {
      return n;
    }
    boolean xor = xorSamples() > 0;
    HistogramHead hh = histHead();
    boolean headGoes = !xor || lastTime < before;
    boolean histGoes = hh == null || hh.maxTime() < before;
    if (xor && headGoes) {
      n += xorCapacity();
    }
    if (hh != null && histGoes) {
      n += hh.capacityBytes();
    }
    OooSeries ooo = ooo();
    boolean empty = headGoes && histGoes && (ooo == null || ooo.isEmpty());
    return empty ? -n : n;
  }

  /**
   * Drops chunks whose samples are all older than {@code before}.
   *
   * @return whether the series holds no sample any more
   */
  synchronized boolean dropChunksBefore(long before) {
    int keepFrom = 0;
    while (keepFrom < numChunks && chunkTimes[2 * keepFrom + 1] < before) {
      numSamples -= Chunks.numSamples(encodingOf(keepFrom), chunks[keepFrom]);
      keepFrom++;
    }
    if (keepFrom > 0) {
      int left = numChunks - keepFrom;
      System.arraycopy(chunks, keepFrom, chunks, 0, left);
      System.arraycopy(chunkTimes, 2 * keepFrom, chunkTimes, 0, 2 * left);
      byte[] enc = chunkEnc();
      if (enc != null) {
        System.arraycopy(enc, keepFrom, enc, 0, left);
      }
      java.util.Arrays.fill(chunks, left, numChunks, null);
      numChunks = left;
    }
    if (numChunks == 0 && xorSamples() > 0 && lastTime < before) {
      numSamples -= xorSamples();
      xorRelease();
    }
    HistogramHead hh = histHead();
    if (numChunks == 0 && hh != null && hh.maxTime() < before) {
      numSamples -= hh.numSamples();
      rare.histHead = null;
    }
    OooSeries ooo = ooo();
    return numChunks == 0 && xorSamples() == 0 && histHead() == null && (ooo == null || ooo.isEmpty());
  }

  /**
   * Bytes held by sample data: the closed chunks with their array headers, the arrays that index
   * them (references, min and max times, encodings), and the head chunks' buffers. The arrays
   * were left out until 2026-12-06: ~150 bytes per series with one closed chunk, so a head whose
   * series all had one came out at 1.2 x its estimate (CatchUpMemoryIT).
   */
  synchronized long chunkBytes() {
    long n = 0;
    for (int i = 0; i < numChunks; i++) {
      n += arrayBytes(chunks[i].length);
    }
    if (chunks.length > 0) {
      n += arrayBytes(4L * chunks.length) + arrayBytes(16L * chunks.length);
    }
    if (rare != null) {
      n += RARE_BYTES;
    }
    byte[] enc = chunkEnc();
    if (enc != null) {
      n += arrayBytes(enc.length);
    }
    OooSeries ooo = ooo();
    if (ooo != null) {
      n += ooo.bytes();
    }
    HistogramHead hh = histHead();
    n += hh == null ? 0 : hh.capacityBytes();
    return n + xorCapacity(); // 0 without a float head chunk (its buffer is released)
  }

  /** The heap bytes of an array with {@code dataBytes} of elements: a 16-byte header, 8-byte aligned. */
  static long arrayBytes(long dataBytes) {
    return (16 + dataBytes + 7) & ~7L;
  }

  @Override
  public String toString() {
    return labels().toString();
  }
}
