package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.Arrays;

/**
 * Collects the samples of one request and appends them to a {@link TenantHead} in one commit.
 * Usage:
 *
 * <pre>{@code
 * Appender app = head.appender();
 * MemSeries s = app.series(labels);  // sorted, validated labels; may throw the series limit
 * app.add(s, t, v);
 * CommitResult r = app.commit(true); // true: return only once the WAL is fsynced
 * }</pre>
 *
 * <p>Not thread-safe; one appender per request (it may be reused after {@link #commit}).
 */
public final class Appender {
  private static final MemSeries[] NO_SERIES = new MemSeries[0];
  private static final long[] NO_TIMES = new long[0];
  private static final double[] NO_VALUES = new double[0];
  /** The most samples a thread's {@link Batch} arrays hold (16,384: 320 KiB per thread). */
  static final int BATCH_ARRAYS_KEPT = 16 * 1024;
  private static final ThreadLocal<Batch> BATCH = ThreadLocal.withInitial(Batch::new);

  /**
   * One thread's batch arrays, lent to one appender at a time from {@link #reserve} to its
   * {@link #commit} (or {@link #release}): a push reserved three new arrays of its batch's size
   * (about 40 KB for 2,000 samples), a fifth of what the remote write path allocated. An appender
   * that is never committed nor released keeps them lent; its thread's next appenders then make
   * their own, as before.
   */
  private static final class Batch {
    MemSeries[] series = NO_SERIES;
    long[] timestamps = NO_TIMES;
    double[] values = NO_VALUES;
    boolean lent;
  }

  private final TenantHead head;
  // Empty until the first add or reserve: a push reserves its batch's size at once.
  private MemSeries[] series = NO_SERIES;
  private long[] timestamps = NO_TIMES;
  private double[] values = NO_VALUES;
  /** The largest {@link #reserve} since the last commit or release: the batch's size. */
  private int reserved;
  /** The thread's arrays while this appender holds them, else null. */
  private @org.jspecify.annotations.Nullable Batch borrowed;
  /** Per sample its histogram, null for a float sample; allocated at the first histogram. */
  private @org.jspecify.annotations.Nullable NativeHistogram @org.jspecify.annotations.Nullable [] histograms;
  private int size;
  private long source = -1;
  private MemSeries[] exemplarSeries = new MemSeries[0];
  private Exemplar[] exemplars = new Exemplar[0];
  private int numExemplars;
  private HeadExemplars.@org.jspecify.annotations.Nullable Result exemplarResult;

  Appender(TenantHead head) {
    this.head = head;
  }

  /**
   * The series with these labels, created when new.
   *
   * @throws dev.weir.storage.errors.ClientErrorException when creating it would exceed the
   *     tenant's series limit
   */
  public MemSeries series(Labels labels) {
    return head.getOrCreate(labels);
  }

  /**
   * The series whose labels are encoded in {@code canonical} ({@link Labels#withWireEncoding}'s
   * bytes, which a new series keeps: the caller must not change them) with {@link Labels#hashCode()}
   * {@code hash}, created when new.
   *
   * @throws dev.weir.storage.errors.ClientErrorException when creating it would exceed the
   *     tenant's series limit
   */
  public MemSeries series(byte[] canonical, int hash) {
    return head.getOrCreate(canonical, hash);
  }

  /** What {@link TenantHead#warmLookups} read, kept so that the reads are not optimized away. */
  private int warmed;

  /**
   * Brings into the cache what the lookups of the coming series (label hashes
   * {@code labelsHashOf(from..to-1)}) will read: {@link TenantHead#warmLookups}.
   */
  public void warmLookups(java.util.function.IntUnaryOperator labelsHashOf, int from, int to) {
    warmed += head.warmLookups(labelsHashOf, from, to);
  }

  /** The existing series whose labels equal {@code key} (see {@link TenantHead#getByKey}), or null. */
  public @org.jspecify.annotations.Nullable MemSeries existing(dev.weir.storage.tsdb.labels.SeriesKey key) {
    return head.getByKey(key);
  }

  /**
   * Makes room for {@code n} samples in all, so that a caller that knows its batch's size adds
   * them without the arrays growing (and being copied) on the way.
   */
  public void reserve(int n) {
    reserved = Math.max(reserved, n);
    if (n > series.length && size == 0 && borrowed == null && n <= BATCH_ARRAYS_KEPT) {
      Batch b = BATCH.get();
      if (!b.lent) {
        if (b.series.length < n) {
          int capacity = Math.max(n, Math.min(BATCH_ARRAYS_KEPT, 2 * b.series.length));
          b.series = new MemSeries[capacity];
          b.timestamps = new long[capacity];
          b.values = new double[capacity];
        }
        b.lent = true;
        borrowed = b;
        series = b.series;
        timestamps = b.timestamps;
        values = b.values;
        if (histograms != null && histograms.length < series.length) {
          histograms = Arrays.copyOf(histograms, series.length);
        }
        return;
      }
    }
    if (n > series.length) {
      series = Arrays.copyOf(series, n);
      timestamps = Arrays.copyOf(timestamps, n);
      values = Arrays.copyOf(values, n);
      if (histograms != null) {
        histograms = Arrays.copyOf(histograms, n);
      }
    }
  }

  public void add(MemSeries s, long t, double v) {
    if (size == series.length) {
      int n = Math.max(64, size * 2);
      series = Arrays.copyOf(series, n);
      timestamps = Arrays.copyOf(timestamps, n);
      values = Arrays.copyOf(values, n);
      if (histograms != null) {
        histograms = Arrays.copyOf(histograms, n);
      }
    }
    @org.jspecify.annotations.Nullable NativeHistogram @org.jspecify.annotations.Nullable [] hs = histograms;
    if (hs != null && size >= hs.length) {
      histograms = Arrays.copyOf(hs, Math.min(series.length, Math.max(size + 1, 2 * hs.length)));
    }
    series[size] = s;
    timestamps[size] = t;
    values[size] = v;
    size++;
  }

  /** Adds an exemplar of {@code s}, stored by {@link #commit} after the samples (see {@link HeadExemplars}). */
  public void exemplar(MemSeries s, Exemplar e) {
    if (numExemplars == exemplars.length) {
      int n = Math.max(8, numExemplars * 2);
      exemplarSeries = Arrays.copyOf(exemplarSeries, n);
      exemplars = Arrays.copyOf(exemplars, n);
    }
    exemplarSeries[numExemplars] = s;
    exemplars[numExemplars++] = e;
  }

  /** What the last {@link #commit} did with its exemplars, or null when it had none. */
  public HeadExemplars.@org.jspecify.annotations.Nullable Result exemplarResult() {
    return exemplarResult;
  }

  /**
   * Adds a native histogram sample; checked and logged with the float samples of the same commit
   * (WAL record types 7-10), in order per series.
   */
  public void addHistogram(MemSeries s, long t, NativeHistogram h) {
    if (histograms == null) {
      // As many as this batch reserved, not the thread's arrays' capacity (up to 16,384).
      histograms = new NativeHistogram[Math.min(series.length, Math.max(size + 1, reserved))];
    }
    add(s, t, h.count()); // grows the histograms to cover the sample
    histograms[size - 1] = h;
  }

  /**
   * Records that the samples of the next commit came from this source (Kafka) offset. It is
   * written to the WAL with them, so that a replay that has to drop data can say from which offset
   * to re-consume it. Optional; forgotten after {@link #commit}.
   */
  public void source(long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException("source offset must not be negative: " + offset);
    }
    this.source = offset;
  }

  public int size() {
    return size;
  }

  /**
   * Checks, logs and stores the collected samples, then forgets them.
   *
   * @param durable wait until the WAL is fsynced before returning
   * @throws dev.weir.storage.errors.ServerErrorException when the WAL could not be written;
   *     nothing of the batch was stored then
   */
  public CommitResult commit(boolean durable) {
    exemplarResult = null;
    try {
      CommitResult r = head.commit(series, timestamps, values, histograms, size, durable, source);
      if (numExemplars > 0) {
        exemplarResult = head.exemplars().commit(exemplarSeries, exemplars, numExemplars, durable);
      }
      return r;
    } finally {
      release();
    }
  }

  /**
   * Forgets the samples and exemplars not committed and gives back the thread's batch arrays when
   * this appender holds them ({@link #commit} does it too); a push calls it when it ends without a
   * commit (a request refused whole).
   */
  public void release() {
    Arrays.fill(series, 0, size, null);
    if (histograms != null) {
      Arrays.fill(histograms, 0, Math.min(size, histograms.length), null);
    }
    Arrays.fill(exemplarSeries, 0, numExemplars, null);
    Arrays.fill(exemplars, 0, numExemplars, null);
    numExemplars = 0;
    source = -1;
    reserved = 0;
    Batch b = borrowed;
    if (b != null) {
      if (b.series != series) {
        // This appender outgrew them: no series kept alive by the thread's arrays either.
        Arrays.fill(b.series, 0, Math.min(size, b.series.length), null);
      }
      series = NO_SERIES;
      timestamps = NO_TIMES;
      values = NO_VALUES;
      borrowed = null;
      b.lent = false;
    }
    size = 0;
  }

  /** For tests: whether this appender holds its thread's batch arrays. */
  boolean holdsThreadArrays() {
    return borrowed != null;
  }

  /** For tests: how many series the calling thread's batch arrays still reference. */
  static int threadArraysSeriesHeld() {
    int n = 0;
    for (MemSeries s : BATCH.get().series) {
      n += s == null ? 0 : 1;
    }
    return n;
  }
}
