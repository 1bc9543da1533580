package dev.weir.storage.tsdb.head;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.labels.SeriesKey;
import dev.weir.storage.tsdb.postings.Selector;
import dev.weir.storage.tsdb.wal.HistogramBatch;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalRecords;
import dev.weir.storage.util.ByteSink;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory head of one tenant: series keyed by their sorted labels, XOR chunks, a postings
 * index for matchers, and (optionally) the tenant's WAL.
 *
 * <p><b>Commit = check, log, apply.</b> {@link #commit} checks every sample of a batch under one
 * append lock (newer than its series' newest sample, not older than the head accepts; a sample
 * identical in time and value to one the series already holds — its newest or an older one, as
 * when a Kafka record is re-read after a restart — is a silent duplicate, not a discard), writes the accepted samples — preceded by the records
 * of series not yet logged — to the WAL, and only then applies them. If the WAL write fails,
 * nothing of the batch is applied, so nothing unlogged is ever visible. With {@code durable} the
 * caller then waits for the fsync outside the lock (group commit).
 *
 * <p>Lock order: append lock, then creation lock. Queries take neither; they read each series
 * under its monitor.
 *
 * <p>Thread-safe.
 */
public final class TenantHead {
  private final String tenant;
  private final HeadConfig config;
  private final HeadOptions options;
  private volatile @Nullable Wal wal;

  private final SeriesMap series = new SeriesMap();
  private final SeriesRefs refs = new SeriesRefs();
  /** WAL refs that replay mapped onto an existing series with the same labels. */
  private final ConcurrentHashMap<Integer, MemSeries> aliases = new ConcurrentHashMap<>();
  private final PostingsIndex postings = new PostingsIndex();
  private final Object createLock = new Object();
  private int nextRef = 1;
  /**
   * The name numbers of the series created last, by label position, for the next one's labels
   * ({@link dev.weir.storage.tsdb.labels.CompactLabels#fromCanonical}); guarded by the create lock.
   */
  private final int[] recentNames = new int[16];

  private final ReentrantLock appendLock = new ReentrantLock();
  private ByteSink walBuffer = new ByteSink(WAL_BUFFER_BYTES);
  /** Initial WAL buffer; large enough for a typical push of a few thousand samples. */
  private static final int WAL_BUFFER_BYTES = 64 * 1024;
  /**
   * A commit's in-order samples as the WAL records take them (ref, time, value), kept per
   * committing thread (HTTP handlers, gRPC and Kafka shard threads; a commit runs on one thread
   * from start to end) and reused from commit to commit: at most {@link #LOG_ARRAYS_KEPT}
   * samples, 20 bytes each, per thread; a larger commit uses arrays of its own.
   */
  private static final class LogArrays {
    int[] refs = new int[0];
    long[] times = new long[0];
    double[] values = new double[0];

    void ensure(int n) {
      if (refs.length < n) {
        int size = Math.max(n, Math.min(LOG_ARRAYS_KEPT, 2 * refs.length));
        refs = new int[size];
        times = new long[size];
        values = new double[size];
      }
    }
  }

  private static final ThreadLocal<LogArrays> LOG_ARRAYS = ThreadLocal.withInitial(LogArrays::new);
  private static final int LOG_ARRAYS_KEPT = 16 * 1024;
  /** Largest WAL record payload this head writes; see {@link WalRecords#MAX_WRITE_PAYLOAD_BYTES}. */
  private final int walRecordBytes;
  private long txn;
  /** The out-of-order write-behind log. */
  private final Wbl wbl = new Wbl();
  /** The tenant's out-of-order window in milliseconds (0: off); read at every commit. */
  private volatile LongSupplier oooWindow = () -> 0;
  private volatile long minValidTime = Long.MIN_VALUE;
  private volatile long minTime = Long.MAX_VALUE;
  private volatile long maxTime = Long.MIN_VALUE;

  /** Series created by replay, added to postings in ref order when replay finishes. */
  private @Nullable UnindexedSeries replayed;
  /**
   * The postings of a large replay being built in the background ({@link #finishReplay}); null
   * once the index is complete. Whatever reads the index waits for it.
   */
  private volatile @Nullable CompletableFuture<Void> postingsBuild;
  /** Series created while the replay's postings are built: added after them, in ref order. */
  private @Nullable UnindexedSeries pendingPostings;
  private final HeadExemplars exemplars = new HeadExemplars(this);
  private final HeadMetadata metadata = new HeadMetadata(this);

  public TenantHead(String tenant, HeadConfig config, HeadOptions options) {
    this(tenant, config, options, WalRecords.MAX_WRITE_PAYLOAD_BYTES);
  }

  /** Test knob: {@code walRecordBytes} caps WAL record payloads lower than the real limit. */
  TenantHead(String tenant, HeadConfig config, HeadOptions options, int walRecordBytes) {
    this.tenant = tenant;
    this.config = config;
    this.options = options;
    this.wal = options.wal();
    this.walRecordBytes = walRecordBytes;
  }

  public String tenant() {
    return tenant;
  }

  public HeadConfig config() {
    return config;
  }

  public @Nullable Wal wal() {
    return wal;
  }

  /** Attaches the WAL after replay; from then on every commit is logged. */
  public void attachWal(Wal w) {
    appendLock.lock();
    try {
      this.wal = w;
    } finally {
      appendLock.unlock();
    }
  }

  /** The tenant's exemplars (stored, logged and queried apart from samples). */
  public HeadExemplars exemplars() {
    return exemplars;
  }

  /** The tenant's metric metadata by family. */
  public HeadMetadata metadata() {
    return metadata;
  }

  ReentrantLock appendLock() {
    return appendLock;
  }

  int walRecordBytes() {
    return walRecordBytes;
  }

  /** The postings index, once complete (waits for a replay's background build). */
  PostingsIndex postings() {
    awaitPostings();
    return postings;
  }

  /** The postings index, or null while a replay's background build is still running. */
  @Nullable PostingsIndex postingsIfBuilt() {
    CompletableFuture<Void> f = postingsBuild;
    return f == null || (f.isDone() && !f.isCompletedExceptionally()) ? postings : null;
  }

  /**
   * Why this head cannot answer queries: its replay's background index build failed (sticky until
   * restart; readiness reports it), or null.
   */
  public @Nullable String indexFailure() {
    CompletableFuture<Void> f = postingsBuild;
    if (f == null || !f.isCompletedExceptionally()) {
      return null;
    }
    try {
      f.getNow(null);
      return null;
    } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
      return "building the index after the WAL replay failed: " + (e.getCause() == null ? e : e.getCause());
    }
  }

  /**
   * Waits until the postings of the replay are built (at most the time of one build, about 2 s
   * per million series on 2 cores).
   *
   * @throws IllegalStateException when the build failed or the wait was interrupted
   */
  private void awaitPostings() {
    CompletableFuture<Void> f = postingsBuild;
    if (f == null) {
      return;
    }
    try {
      f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the head's index of tenant " + tenant, e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("building the head's index of tenant " + tenant + " failed: " + e.getCause(),
          e.getCause());
    }
  }

  /** The live series with this WAL ref (or alias), or null. */
  @Nullable MemSeries byRef(int ref) {
    MemSeries s = refs.get(ref);
    return s != null ? s : aliases.get(ref);
  }

  /**
   * Attaches the out-of-order write-behind log: {@code opened} when it exists already (replayed),
   * else {@code opener} creates it at the first out-of-order sample.
   */
  public void attachWbl(Wbl.Opener opener, @Nullable Wal opened) {
    appendLock.lock();
    try {
      wbl.attach(opener, opened);
    } finally {
      appendLock.unlock();
    }
  }

  /** The write-behind log, or null while no out-of-order sample needed it. */
  public @Nullable Wal wbl() {
    return wbl.current();
  }

  /** Sets where the tenant's out-of-order window comes from (milliseconds; 0 turns it off). */
  public void outOfOrderWindow(LongSupplier windowMillis) {
    this.oooWindow = windowMillis;
  }

  public Appender appender() {
    return new Appender(this);
  }

  /** Number of series in memory. */
  public int numSeries() {
    return series.size();
  }

  /** Oldest sample time in the head, or Long.MAX_VALUE when empty. */
  public long minTime() {
    return minTime;
  }

  /** Newest sample time in the head, or Long.MIN_VALUE when empty. */
  public long maxTime() {
    return maxTime;
  }

  /** Samples older than this are refused (the end of the last compacted range). */
  public long minValidTime() {
    return minValidTime;
  }

  /**
   * Float samples older than {@code below} of a series that holds no sample yet are refused by
   * every commit from now on, for {@code reason}; {@code below} is Long.MIN_VALUE when no time is
   * certain to be refused.
   */
  public record NewSeriesBound(long below, RejectReason reason) {}

  /**
   * What {@link SampleCheck} refuses of a series that holds no sample, read without the append
   * lock: older than the head's in-order lower bound, and with an out-of-order window also older
   * than the head's newest time minus the window. Both times only rise, so a sample under the
   * bound now is refused at any later commit (a window widened meanwhile by a runtime override
   * aside: the sample is judged by the window in force when its push was checked). The ingester
   * checks a new series' samples against it before it creates the series (Prometheus' appender
   * refuses on its bound before {@code getOrCreate} when out-of-order ingestion is off): a series
   * whose samples are all too old is not created, and takes no place under the tenant's series
   * limit.
   */
  public NewSeriesBound newSeriesBound() {
    long window = oooWindow.getAsLong();
    long max = maxTime;
    long lowest = Math.max(minValidTime, max == Long.MIN_VALUE ? Long.MIN_VALUE : max - config.chunkRangeMillis() / 2);
    if (window <= 0) {
      return new NewSeriesBound(lowest, RejectReason.OUT_OF_BOUNDS);
    }
    // With a window, the commit refuses only below the window too; an empty head has none yet.
    return new NewSeriesBound(max == Long.MIN_VALUE ? Long.MIN_VALUE : Math.min(lowest, max - window),
        RejectReason.TOO_OLD);
  }

  /** Raises the minimum valid time, e.g. to the end of blocks found at start-up. */
  public void setMinValidTime(long t) {
    appendLock.lock();
    try {
      minValidTime = Math.max(minValidTime, t);
    } finally {
      appendLock.unlock();
    }
  }

  /** Number of series that received a sample at or after {@code sinceWallMillis}. */
  public int activeSeries(long sinceWallMillis) {
    int[] n = {0};
    series.forEachApproximately(s -> {
      if (s.lastAppendWallMillis() >= sinceWallMillis) {
        n[0]++;
      }
    });
    return n[0];
  }

  MemSeries getOrCreate(Labels labels) {
    MemSeries s = series.get(labels);
    return s != null ? s : create(labels, () -> labels, ref -> createLocked(labels, ref));
  }

  /**
   * {@link #getOrCreate(Labels)} for labels known by their canonical encoding and
   * {@link Labels#hashCode()} (a pushed series read from its bytes): a new series keeps
   * {@code canonical} itself, and the postings index it from the bytes, without a String per label.
   */
  MemSeries getOrCreate(byte[] canonical, int hash) {
    SeriesKey key = SeriesKey.ofEncoded(canonical, hash);
    MemSeries s = series.get(key);
    return s != null ? s : create(key, () -> Labels.fromWireEncoding(canonical, hash),
        ref -> createLocked(MemSeries.ofCanonical(canonical, hash, ref, recentNames)));
  }

  /**
   * Under the create lock: the series of {@code key} if another thread made it meanwhile, else the
   * one {@code create} makes with the next ref, within the tenant's series limit ({@code labels}
   * for the refusal's message).
   */
  private MemSeries create(SeriesKey key, Supplier<Labels> labels, IntFunction<MemSeries> create) {
    int limit = options.maxSeries().getAsInt();
    synchronized (createLock) {
      MemSeries s = series.get(key);
      if (s != null) {
        return s;
      }
      if (limit > 0 && series.size() >= limit) {
        throw new ClientErrorException("per_user_series_limit", "per-user series limit of " + limit
            + " exceeded for tenant " + tenant + ", the series was not created: '" + labels.get() + "'");
      }
      return create.apply(nextRef++);
    }
  }

  private MemSeries createLocked(Labels labels, int ref) {
    // No string is kept: the series keeps its labels' bytes, and the postings read values from
    // them (a value two series share is copied once, into its posting list).
    return createLocked(new MemSeries(labels, ref, recentNames));
  }

  /** Registers a new series (the postings read its labels from its bytes). */
  private MemSeries createLocked(MemSeries s) {
    refs.put(s.ref(), s);
    series.put(s);
    if (replayed != null) {
      replayed.add(s);
    } else if (pendingPostings != null) {
      pendingPostings.add(s);
    } else {
      postings.add(s);
    }
    return s;
  }

  /** See {@link Appender#commit}; {@code source} is the batch's source offset for the WAL, or -1. */
  CommitResult commit(MemSeries[] batch, long[] ts, double[] vs, @Nullable NativeHistogram @Nullable [] hs, int n,
      boolean durable, long source) {
    if (n == 0) {
      return new CommitResult(0, 0, List.of());
    }
    byte[] kinds = new byte[n];
    List<Rejection> rejections = new ArrayList<>(0);
    int appended = 0;
    int ooo = 0;
    int duplicates = 0;
    long lsn = 0;
    long wblLsn = 0;
    Wal wblUsed = null;
    appendLock.lock();
    try {
      long id = ++txn;
      long lowest = Math.max(minValidTime, maxTime == Long.MIN_VALUE ? Long.MIN_VALUE
          : maxTime - config.chunkRangeMillis() / 2);
      SampleCheck check = new SampleCheck(lowest, maxTime, oooWindow.getAsLong(), batch, ts, vs, kinds);
      for (int i = 0; i < n; i++) {
        MemSeries s = batch[i];
        if (s.removed) {
          // Truncation removed it after the caller looked it up: use the live series.
          s = recreate(s.labels());
          batch[i] = s;
        }
        NativeHistogram h = hs == null ? null : hs[i];
        // The series' newest sample: an earlier one of this batch it accepted (pending), else its own.
        boolean has;
        long seriesMax;
        long lastBits;
        NativeHistogram lastHistogram;
        boolean oooHeld;
        if (s.markTxn == id) { // pending
          int p = s.markIndex;
          has = true;
          seriesMax = ts[p];
          lastBits = Double.doubleToRawLongBits(vs[p]);
          lastHistogram = hs == null ? null : hs[p];
          oooHeld = s.hasOoo();
        } else {
          synchronized (s) {
            has = s.hasSamplesLocked();
            seriesMax = s.maxTimeLocked();
            lastBits = s.lastValueBitsLocked();
            lastHistogram = s.lastHistogramLocked();
            oooHeld = s.hasOooLocked();
          }
        }
        byte kind;
        if (h != null) {
          kind = check.checkHistogram(s, ts[i], h, has, seriesMax, lastHistogram);
        } else if (has && ts[i] == seriesMax && lastHistogram != null) {
          kind = check.rejectWith(RejectReason.DUPLICATE_TIMESTAMP); // a float where a histogram is
        } else {
          kind = check.check(i, has, seriesMax, lastBits, oooHeld);
        }
        kinds[i] = kind;
        if (kind == SampleCheck.IN_ORDER) {
          s.markTxn = id;
          s.markIndex = i;
          appended++;
        } else if (kind == SampleCheck.OUT_OF_ORDER) {
          ooo++;
        } else if (kind == SampleCheck.DUPLICATE) {
          duplicates++; // stored before (a re-read Kafka record): idempotent, not a discard
        } else {
          rejections.add(new Rejection(s, ts[i], vs[i], check.reason(), h != null));
        }
      }
      Wal w = wal;
      if (appended + ooo > 0 && w != null) {
        Accepted a = new Accepted(batch, ts, vs, hs, n, kinds);
        lsn = log(w, id, source, a, appended);
        if (ooo > 0) {
          wblUsed = wbl.get();
          wblLsn = wbl.log(wblUsed, a, ooo, walRecordBytes);
        }
      }
      long now = options.wallClock().getAsLong();
      long lo = minTime;
      long hi = maxTime;
      for (int i = 0; i < n; i++) {
        if (kinds[i] == SampleCheck.IN_ORDER) {
          NativeHistogram h = hs == null ? null : hs[i];
          if (h != null) {
            batch[i].appendHistogram(ts[i], h, config.samplesPerChunk(), config.chunkRangeMillis(), now);
          } else {
            batch[i].append(ts[i], vs[i], config.samplesPerChunk(), config.chunkRangeMillis(), now);
          }
          lo = Math.min(lo, ts[i]);
          hi = Math.max(hi, ts[i]);
        } else if (kinds[i] == SampleCheck.OUT_OF_ORDER) {
          batch[i].appendOoo(ts[i], vs[i], config.oooCapMax(), now);
        }
      }
      minTime = lo;
      maxTime = hi;
    } finally {
      appendLock.unlock();
    }
    Wal w = wal;
    if (durable && lsn > 0 && w != null) {
      w.awaitDurable(lsn);
    }
    if (durable && wblLsn > 0 && wblUsed != null) {
      wblUsed.awaitDurable(wblLsn);
    }
    return new CommitResult(appended + ooo, duplicates, rejections, ooo);
  }

  private MemSeries recreate(Labels labels) {
    synchronized (createLock) {
      MemSeries s = series.get(labels);
      return s != null ? s : createLocked(labels, nextRef++);
    }
  }

  /** A checked batch: the first {@code n} samples (histograms where {@code hs} has one) and their {@link SampleCheck} decisions. */
  record Accepted(MemSeries[] batch, long[] ts, double[] vs, @Nullable NativeHistogram @Nullable [] hs, int n,
      byte[] kinds) {}

  /**
   * Writes the accepted samples (and unlogged series) to the WAL, in records small enough for the
   * reader; caller holds the append lock. A series is collected once per commit through its
   * mark ({@link MemSeries#QUEUED}; O(1), no list search).
   */
  private long log(Wal w, long txnId, long source, Accepted a, int count) {
    MemSeries[] batch = a.batch();
    long[] ts = a.ts();
    double[] vs = a.vs();
    int n = a.n();
    byte[] kinds = a.kinds();
    walBuffer.reset();
    if (source >= 0) {
      WalRecords.source(walBuffer, source);
    }
    List<MemSeries> newSeries = null;
    for (int i = 0; i < n; i++) {
      MemSeries s = batch[i];
      if ((kinds[i] == SampleCheck.IN_ORDER || kinds[i] == SampleCheck.OUT_OF_ORDER) && !s.logged
          && (s.markTxn != txnId || s.markIndex != MemSeries.QUEUED)) {
        if (newSeries == null) {
          newSeries = new ArrayList<>();
        }
        s.markTxn = txnId; // the batch is checked: the mark now only says "queued"
        s.markIndex = MemSeries.QUEUED;
        newSeries.add(s);
      }
    }
    if (newSeries != null) {
      int[] r = new int[newSeries.size()];
      byte[][] l = new byte[newSeries.size()][];
      for (int i = 0; i < r.length; i++) {
        r[i] = newSeries.get(i).ref();
        l[i] = newSeries.get(i).labelBytes();
      }
      WalRecords.seriesCompact(walBuffer, r, l, r.length, walRecordBytes);
    }
    LogArrays arrays = count <= LOG_ARRAYS_KEPT ? LOG_ARRAYS.get() : new LogArrays();
    arrays.ensure(count);
    int[] r = arrays.refs;
    long[] t = arrays.times;
    double[] v = arrays.values;
    int k = 0;
    @Nullable NativeHistogram[] hs = a.hs();
    HistogramBatch histograms = new HistogramBatch();
    for (int i = 0; i < n; i++) {
      if (kinds[i] != SampleCheck.IN_ORDER) {
        continue;
      }
      NativeHistogram h = hs == null ? null : hs[i];
      // Float and histogram samples go to different records; a switch between the two flushes
      // the run before it, so a replay applies every sample in commit order.
      if (h != null) {
        if (k > 0) {
          WalRecords.samples(walBuffer, r, t, v, k, walRecordBytes);
          k = 0;
        }
        histograms.add(batch[i].ref(), ts[i], h);
      } else {
        if (histograms.size() > 0) {
          histograms.writeTo(walBuffer, walRecordBytes);
        }
        r[k] = batch[i].ref();
        t[k] = ts[i];
        v[k] = vs[i];
        k++;
      }
    }
    if (k > 0) {
      WalRecords.samples(walBuffer, r, t, v, k, walRecordBytes);
    }
    histograms.writeTo(walBuffer, walRecordBytes);
    if (walBuffer.length() == 0) {
      return 0;
    }
    long lsn;
    try {
      lsn = w.append(walBuffer); // throws before anything is applied
    } finally {
      if (walBuffer.array().length > 16 * WAL_BUFFER_BYTES) {
        walBuffer = new ByteSink(WAL_BUFFER_BYTES); // a huge commit does not pin its buffer forever
      }
    }
    if (newSeries != null) {
      for (MemSeries s : newSeries) {
        s.logged = true;
      }
    }
    return lsn;
  }

  // ---- Replay ------------------------------------------------------------------------------

  /** Starts a replay: series are created with their WAL refs; postings are built at the end. */
  public void beginReplay() {
    synchronized (createLock) {
      replayed = new UnindexedSeries();
    }
  }

  /** A series record from the WAL. A second ref for the same labels becomes an alias. */
  public void replaySeries(int ref, Labels labels) {
    synchronized (createLock) {
      MemSeries existing = series.get(labels);
      if (existing != null) {
        if (existing.ref() != ref) {
          aliases.put(ref, existing);
        }
      } else if (refs.get(ref) == null) {
        createLocked(labels, ref).logged = true;
      }
      nextRef = Math.max(nextRef, ref + 1);
    }
  }

  /**
   * A series record from the WAL read as its labels' compact form ({@link
   * dev.weir.storage.tsdb.labels.CompactLabels}, made by this process' reader) and hash (no
   * String: the postings decode the labels when they index the series). As
   * {@link #replaySeries(int, Labels)}; the form is what the new series keeps until the index
   * build gives it its value numbers ({@link MemSeries#numberValues}), or at once outside a
   * replay. The lookup compares forms (arrays, then label by label: a series of the same labels
   * made from {@link Labels} has its value numbers already).
   */
  public void replaySeries(int ref, byte[] compact, int hash) {
    synchronized (createLock) {
      if (replayed == null) {
        compact = dev.weir.storage.tsdb.labels.CompactLabels.withValueNumbers(compact); // indexed at once
      }
      MemSeries existing = series.get(SeriesKey.ofCompact(compact, hash));
      if (existing != null) {
        if (existing.ref() != ref) {
          aliases.put(ref, existing);
        }
      } else if (refs.get(ref) == null) {
        createLocked(MemSeries.ofCompact(compact, hash, ref)).logged = true;
      }
      nextRef = Math.max(nextRef, ref + 1);
    }
  }

  /**
   * A sample record from the WAL, applied without re-checking (it was accepted once), except
   * that samples older than the head's minimum valid time (already in a block) are skipped.
   *
   * @return false when the ref is unknown
   */
  public boolean replaySample(int ref, long t, double v) {
    return replay(ref, t, v, null);
  }

  /** {@link #replaySample} for a histogram sample (WAL record types 7-10). */
  public boolean replayHistogram(int ref, long t, NativeHistogram h) {
    return replay(ref, t, h.count(), h);
  }

  private boolean replay(int ref, long t, double v, @Nullable NativeHistogram h) {
    MemSeries s = refs.get(ref);
    if (s == null) {
      s = aliases.get(ref);
      if (s == null) {
        return false;
      }
    }
    if (t < minValidTime) {
      return true;
    }
    if (h != null) {
      if (s.hasSamples() && t <= s.maxTime()) {
        return true;
      }
      s.appendHistogram(t, h, config.samplesPerChunk(), config.chunkRangeMillis(), options.wallClock().getAsLong());
    } else if (!s.appendIfNewer(t, v, config.samplesPerChunk(), config.chunkRangeMillis(),
        options.wallClock().getAsLong())) {
      return true;
    }
    if (t < minTime) {
      minTime = t;
    }
    if (t > maxTime) {
      maxTime = t;
    }
    return true;
  }

  /**
   * An out-of-order sample from the WBL (replayed after the WAL, so its series exists). A
   * timestamp the series already holds is skipped: the WBL is replayed once per start, but a
   * crash between an out-of-order compaction and the WBL's truncation leaves samples that are in
   * a block too (the block then overlaps, and queries merge the copies).
   *
   * @return false when the ref is unknown
   */
  public boolean replayOooSample(int ref, long t, double v) {
    MemSeries s = refs.get(ref);
    if (s == null) {
      s = aliases.get(ref);
      if (s == null) {
        return false;
      }
    }
    if (s.lookup(t, Double.doubleToRawLongBits(v)) == SampleLookup.ABSENT) {
      s.appendOoo(t, v, config.oooCapMax(), options.wallClock().getAsLong());
    }
    return true;
  }

  /**
   * Ends a replay: drops the series that got no sample and builds the postings of the others, in
   * ref order. With at least {@value #BACKGROUND_POSTINGS_MIN_SERIES} series the postings are built
   * on a background thread shared by all heads ({@link #POSTINGS_BUILDER}): the head takes
   * samples at once, series created meanwhile join the index after the build, and every read of
   * the index (queries, truncation, checkpoints) waits for it.
   */
  public void finishReplay() {
    finishReplay(POSTINGS_BUILDER, BACKGROUND_POSTINGS_MIN_SERIES);
  }

  /** Replays with at least this many series build their postings in the background. */
  static final int BACKGROUND_POSTINGS_MIN_SERIES = 50_000;

  /**
   * One daemon thread builds the postings of replayed heads, one head after the other: a start
   * with many tenants does not build them all at once beside the replay of the next.
   */
  private static final Executor POSTINGS_BUILDER = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "head-postings-build");
    t.setDaemon(true);
    return t;
  });

  /** {@link #finishReplay()} with the executor and threshold of the background build (tests). */
  void finishReplay(Executor builder, int backgroundMinSeries) {
    synchronized (createLock) {
      UnindexedSeries kept = replayed;
      replayed = null;
      if (kept == null) {
        return;
      }
      kept.sortByRefAndKeep(s -> {
        if (s.hasAnySamples()) {
          return true;
        }
        series.remove(s);
        refs.put(s.ref(), null);
        s.removed = true;
        return false;
      });
      aliases.values().removeIf(s -> s.removed);
      if (kept.size() < backgroundMinSeries) {
        for (int i = 0; i < kept.size(); i++) {
          kept.index(i, postings);
        }
        return;
      }
      CompletableFuture<Void> build = new CompletableFuture<>();
      pendingPostings = new UnindexedSeries();
      postingsBuild = build;
      try {
        builder.execute(() -> buildPostings(kept, build));
      } catch (RuntimeException e) { // rejected: build here
        buildPostings(kept, build);
      }
    }
  }

  /**
   * Adds the replayed series to the index, then (under the creation lock) those created since;
   * the only writer of the index until it completes {@code build}.
   */
  private void buildPostings(UnindexedSeries kept, CompletableFuture<Void> build) {
    try {
      for (int i = 0; i < kept.size(); i++) {
        kept.index(i, postings);
      }
      synchronized (createLock) {
        UnindexedSeries pending = pendingPostings;
        pendingPostings = null;
        if (pending != null) {
          for (int i = 0; i < pending.size(); i++) {
            pending.index(i, postings);
          }
        }
        build.complete(null);
        postingsBuild = null;
      }
    } catch (RuntimeException | Error e) {
      org.slf4j.LoggerFactory.getLogger(TenantHead.class).error(
          "msg=\"building the head's index after replay failed: queries of the tenant fail\" user={} err=\"{}\"",
          tenant, e.toString());
      build.completeExceptionally(e);
      if (e instanceof Error err) {
        throw err;
      }
    }
  }

  // ---- Truncation ----------------------------------------------------------------------------

  /**
   * Drops everything older than {@code before} (it was written to a block) and refuses samples
   * older than it from now on. Series left without samples are removed.
   *
   * @return the number of series removed
   */
  public int truncate(long before) {
    awaitPostings(); // before the locks: the build takes the creation lock to finish
    appendLock.lock();
    try {
      minValidTime = Math.max(minValidTime, before);
      Set<Integer> removedRefs = new HashSet<>();
      long lo = Long.MAX_VALUE;
      synchronized (createLock) {
        for (MemSeries s : series.snapshot()) {
          if (s.dropChunksBefore(before)) {
            s.removed = true;
            series.remove(s);
            refs.put(s.ref(), null);
            removedRefs.add(s.ref());
          } else {
            lo = Math.min(lo, s.minTime());
          }
        }
        if (!removedRefs.isEmpty()) {
          postings.removeIf(removedRefs::contains);
          aliases.values().removeIf(s -> s.removed);
        }
      }
      minTime = lo; // maxTime stays: the out-of-bounds rule keeps following the newest sample seen
      return removedRefs.size();
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * Every series' in-order chunks that {@link #truncate truncate(before)} would drop, sorted by
   * labels: what an early compaction writes into a block before truncating. Called with
   * {@code before} at or below the oldest time the head accepts in order, so appends running
   * meanwhile only add newer samples, and a chunk being appended to that is returned is closed, so
   * they go into new chunks that the truncation keeps.
   */
  public List<SeriesChunks> chunksBefore(long before) {
    List<SeriesChunks> out = new ArrayList<>();
    for (MemSeries s : series.snapshot()) {
      List<ChunkData> chunks = new ArrayList<>(2);
      s.chunksBefore(before, chunks);
      if (!chunks.isEmpty()) {
        out.add(new SeriesChunks(s.labels(), chunks));
      }
    }
    out.sort((a, b) -> a.labels().compareTo(b.labels()));
    return out;
  }

  /** What {@link #truncate truncate(before)} would free. */
  public record TruncateEstimate(int series, long bytes) {}

  /**
   * Estimates what truncating at {@code before} would free: the series left without samples
   * (each with its whole share of {@link #memoryBytesEstimate()}) and the other series' chunk
   * bytes older than {@code before}. Reads the series table without a lock (approximate).
   */
  public TruncateEstimate truncateEstimate(long before) {
    long[] n = {0, 0}; // series, bytes
    series.forEachApproximately(s -> {
      long b = s.bytesBefore(before);
      if (b < 0) {
        n[0]++;
        n[1] += seriesBytes(s) + PostingList.ENTRY_BYTES_ESTIMATE * (s.labelCount() + 1); // and its postings entries
      } else {
        n[1] += b;
      }
    });
    return new TruncateEstimate((int) n[0], n[1]);
  }

  /**
   * The oldest sample time of a WAL ref that the head still holds in order: a checkpoint drops
   * the ref's older samples (written to a block already); see {@link MemSeries#heldFrom()}.
   * {@code Long.MIN_VALUE} (keep all) for a ref the head does not hold.
   */
  public long heldFrom(int ref) {
    MemSeries s = byRef(ref);
    return s == null ? Long.MIN_VALUE : s.heldFrom();
  }

  /** Whether a WAL ref still contributes to the head (for checkpoints). */
  public boolean isLive(int ref) {
    return refs.get(ref) != null || aliases.containsKey(ref);
  }

  // ---- Queries -------------------------------------------------------------------------------

  /**
   * The series that satisfy all matchers and have samples in {@code [mint, maxt]}, sorted by
   * labels, each with the chunks overlapping the range.
   */
  public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
    return select(mint, maxt, matchers, true);
  }

  /** As {@link #select}, without the out-of-order chunks: what in-order compaction writes. */
  public List<SeriesChunks> selectInOrder(long mint, long maxt) {
    return select(mint, maxt, List.of(), false);
  }

  private List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers, boolean withOoo) {
    int[] selected = Selector.select(postings(), matchers);
    List<SeriesChunks> out = new ArrayList<>();
    for (int ref : selected) {
      MemSeries s = refs.get(ref);
      if (s == null) {
        continue;
      }
      List<ChunkData> chunks = s.chunks(mint, maxt);
      int inOrder = chunks.size();
      if (withOoo) {
        s.oooChunks(mint, maxt, chunks);
      }
      if (chunks.size() > inOrder) {
        chunks.sort(Comparator.comparingLong(ChunkData::minTime)); // overlaps: merged when decoded
      }
      if (!chunks.isEmpty()) {
        out.add(new SeriesChunks(s.labels(), chunks));
      }
    }
    out.sort((a, b) -> a.labels().compareTo(b.labels()));
    return out;
  }

  /** Sorted label names of the matching series with samples in the range. */
  public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
    Set<String> names = new TreeSet<>(dev.weir.storage.tsdb.labels.Utf8Order.COMPARATOR);
    if (matchers.isEmpty() && coversAll(mint, maxt)) {
      names.addAll(postings().labelNames());
    } else {
      forEachSeries(mint, maxt, matchers, s -> names.addAll(s.labels().names()));
    }
    return new ArrayList<>(names);
  }

  /** Sorted values of a label among the matching series with samples in the range. */
  public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
    Set<String> values = new TreeSet<>(dev.weir.storage.tsdb.labels.Utf8Order.COMPARATOR);
    if (matchers.isEmpty() && coversAll(mint, maxt)) {
      values.addAll(postings().labelValues(name));
    } else {
      byte[] nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      forEachSeries(mint, maxt, matchers, s -> {
        String v = s.labelValue(nameBytes);
        if (v != null) {
          values.add(v);
        }
      });
    }
    return new ArrayList<>(values);
  }

  private boolean coversAll(long mint, long maxt) {
    return mint <= minTime && maxt >= maxTime;
  }

  private void forEachSeries(long mint, long maxt, List<Matcher> matchers, Consumer<MemSeries> action) {
    for (int ref : Selector.select(postings(), matchers)) {
      MemSeries s = refs.get(ref);
      if (s == null) {
        continue;
      }
      if ((s.hasSamples() && s.minTime() <= maxt && s.maxTime() >= mint) || (s.hasOoo() && hasOoo(s, mint, maxt))) {
        action.accept(s);
      }
    }
  }

  private static boolean hasOoo(MemSeries s, long mint, long maxt) {
    List<ChunkData> c = new ArrayList<>(1);
    s.oooChunks(mint, maxt, c);
    return !c.isEmpty();
  }

  // ---- Out-of-order compaction ---------------------------------------------------------------

  /** What {@link #sealOoo()} took: per series its sealed chunks, and the last WBL segment they are in. */
  public record OooSnapshot(List<SeriesChunks> series, int lastWblSegment) {}

  /**
   * Starts an out-of-order compaction: under the append lock, rolls the WBL and seals every
   * series' out-of-order chunks, so exactly the samples in WBL segments up to
   * {@code lastWblSegment} are sealed. Queries keep seeing them until {@link #dropSealedOoo}.
   *
   * @return null when there is nothing to compact
   */
  public @Nullable OooSnapshot sealOoo() throws java.io.IOException {
    appendLock.lock();
    try {
      Wal w = wbl.current();
      if (w == null) {
        return null;
      }
      List<SeriesChunks> out = new ArrayList<>();
      for (MemSeries s : series.snapshot()) {
        if (s.hasOoo()) {
          out.add(new SeriesChunks(s.labels(), s.sealOoo()));
        }
      }
      int last = w.roll();
      out.sort((a, b) -> a.labels().compareTo(b.labels()));
      return new OooSnapshot(out, last);
    } finally {
      appendLock.unlock();
    }
  }

  /** Ends an out-of-order compaction: the sealed chunks are in blocks now and leave the head. */
  public void dropSealedOoo(OooSnapshot snap) {
    appendLock.lock();
    try {
      for (SeriesChunks sc : snap.series()) {
        MemSeries s = series.get(sc.labels());
        if (s != null) {
          s.dropSealedOoo();
        }
      }
    } finally {
      appendLock.unlock();
    }
  }

  /** The series with exactly these labels, or null. */
  public @Nullable MemSeries get(Labels labels) {
    return series.get(labels);
  }

  /**
   * The series whose labels {@code key} matches (see {@link dev.weir.storage.wire.WireSeries#key()}),
   * or null.
   */
  public @Nullable MemSeries getByKey(dev.weir.storage.tsdb.labels.SeriesKey key) {
    return series.get(key);
  }

  /**
   * Brings into the cache what {@link #getByKey} will read for the series of these label hashes
   * (see {@link SeriesMap#warm}); a hint that changes nothing. The result only defeats dead-code
   * elimination.
   */
  public int warmLookups(java.util.function.IntUnaryOperator labelsHashOf, int from, int to) {
    return series.warm(labelsHashOf, from, to);
  }

  /** All series, for compaction (a snapshot of the set; sample data is read under each series). */
  public List<MemSeries> allSeries() {
    return series.snapshot();
  }

  /**
   * Estimated heap bytes of the head: per series its objects, label bytes and chunk data, plus
   * the postings index with its names and shared values (a value of one series is its own).
   */
  public long memoryBytesEstimate() {
    long[] n = {0};
    series.forEachApproximately(s -> n[0] += seriesBytes(s));
    return n[0] + postings.bytesEstimate();
  }

  /** A series' share of {@link #memoryBytesEstimate()} without its postings: objects, labels, chunks. */
  private static long seriesBytes(MemSeries s) {
    return SERIES_OVERHEAD_BYTES + s.chunkBytes() + 16L + s.labelBytes().length;
  }

  /**
   * Object overhead per series, as a class histogram of the head shows it ({@code bin/bench memory}
   * with {@code -Dweir.bench.histogram=true}): MemSeries with its float head chunk's fields (104
   * bytes), series table slots (~12 at its load), ref page slot (4) and the head chunk buffer's
   * header (16). The label bytes' array is counted with them ({@link #seriesBytes}).
   */
  static final long SERIES_OVERHEAD_BYTES = 104 + 12 + 4 + 16;
}
