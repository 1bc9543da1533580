package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Interner;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory head of one tenant: series keyed by their sorted labels, XOR chunks, and a
 * postings index for matchers.
 *
 * <p>Appends go through an {@link Appender}; {@link #commit} checks every sample of a batch under
 * one append lock (newer than its series' newest sample; an identical sample is a silent
 * duplicate), then applies the accepted ones. Checking before applying keeps the decision for
 * the whole batch in one place, so a log write can sit between the two phases and nothing that
 * failed to be logged is ever visible.
 *
 * <p>Thread-safe. Queries never take the append lock; they read each series under its monitor.
 */
public final class TenantHead {
  private final String tenant;
  private final HeadConfig config;
  private final Interner interner;
  private final LongSupplier wallClock;

  private final ConcurrentHashMap<Labels, MemSeries> series = new ConcurrentHashMap<>();
  private final SeriesRefs refs = new SeriesRefs();
  private final PostingsIndex postings = new PostingsIndex();
  private final Object createLock = new Object();
  private int nextRef = 1;

  private final ReentrantLock appendLock = new ReentrantLock();
  private long txn;

  public TenantHead(String tenant, HeadConfig config, Interner interner, LongSupplier wallClock) {
    this.tenant = tenant;
    this.config = config;
    this.interner = interner;
    this.wallClock = wallClock;
  }

  public String tenant() {
    return tenant;
  }

  public Appender appender() {
    return new Appender(this);
  }

  /** Number of series in memory. */
  public int numSeries() {
    return series.size();
  }

  /** Number of series that received a sample at or after {@code sinceWallMillis}. */
  public int activeSeries(long sinceWallMillis) {
    int n = 0;
    for (MemSeries s : series.values()) {
      if (s.lastAppendWallMillis() >= sinceWallMillis) {
        n++;
      }
    }
    return n;
  }

  MemSeries getOrCreate(Labels labels) {
    MemSeries s = series.get(labels);
    if (s != null) {
      return s;
    }
    synchronized (createLock) {
      s = series.get(labels);
      if (s != null) {
        return s;
      }
      Labels interned = interner.intern(labels);
      int ref = nextRef++;
      s = new MemSeries(interned, ref);
      refs.put(ref, s);
      postings.add(ref, interned);
      series.put(interned, s);
      return s;
    }
  }

  CommitResult commit(MemSeries[] batch, long[] ts, double[] vs, int n) {
    if (n == 0) {
      return new CommitResult(0, 0, List.of());
    }
    boolean[] accepted = new boolean[n];
    List<Rejection> rejections = Appender.newRejections();
    int appended = 0;
    int duplicates = 0;
    appendLock.lock();
    try {
      long id = ++txn;
      for (int i = 0; i < n; i++) {
        MemSeries s = batch[i];
        long bits = Double.doubleToRawLongBits(vs[i]);
        boolean pending = s.pendingTxn == id;
        boolean has = pending || s.hasSamples();
        long maxT = pending ? s.pendingT : s.maxTime();
        long lastBits = pending ? s.pendingValueBits : s.lastValueBits();
        if (has && ts[i] < maxT) {
          rejections.add(new Rejection(s, ts[i], vs[i], RejectReason.OUT_OF_ORDER));
        } else if (has && ts[i] == maxT) {
          if (bits == lastBits) {
            duplicates++;
          } else {
            rejections.add(new Rejection(s, ts[i], vs[i], RejectReason.DUPLICATE_TIMESTAMP));
          }
        } else {
          accepted[i] = true;
          s.pendingTxn = id;
          s.pendingT = ts[i];
          s.pendingValueBits = bits;
          appended++;
        }
      }
      long now = wallClock.getAsLong();
      for (int i = 0; i < n; i++) {
        if (accepted[i]) {
          batch[i].append(ts[i], vs[i], config.samplesPerChunk(), config.chunkRangeMillis(), now);
        }
      }
    } finally {
      appendLock.unlock();
    }
    return new CommitResult(appended, duplicates, rejections);
  }

  /**
   * The series that satisfy all matchers and have samples in {@code [mint, maxt]}, sorted by
   * labels, each with the chunks overlapping the range.
   */
  public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
    int[] selected = postings.select(matchers);
    List<SeriesChunks> out = new ArrayList<>();
    for (int ref : selected) {
      MemSeries s = refs.get(ref);
      if (s == null) {
        continue;
      }
      List<ChunkData> chunks = s.chunks(mint, maxt);
      if (!chunks.isEmpty()) {
        out.add(new SeriesChunks(s.labels(), chunks));
      }
    }
    out.sort((a, b) -> a.labels().compareTo(b.labels()));
    return out;
  }

  /** Sorted label names of the matching series with samples in the range. */
  public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
    Set<String> names = new TreeSet<>();
    if (matchers.isEmpty() && coversAll(mint, maxt)) {
      names.addAll(postings.labelNames());
    } else {
      forEachSeries(mint, maxt, matchers, s -> names.addAll(s.labels().names()));
    }
    return new ArrayList<>(names);
  }

  /** Sorted values of a label among the matching series with samples in the range. */
  public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
    Set<String> values = new TreeSet<>();
    if (matchers.isEmpty() && coversAll(mint, maxt)) {
      values.addAll(postings.labelValues(name));
    } else {
      forEachSeries(
          mint,
          maxt,
          matchers,
          s -> {
            String v = s.labels().get(name);
            if (v != null) {
              values.add(v);
            }
          });
    }
    return new ArrayList<>(values);
  }

  private static boolean coversAll(long mint, long maxt) {
    return mint == Long.MIN_VALUE && maxt == Long.MAX_VALUE;
  }

  private void forEachSeries(
      long mint, long maxt, List<Matcher> matchers, java.util.function.Consumer<MemSeries> action) {
    for (int ref : postings.select(matchers)) {
      MemSeries s = refs.get(ref);
      if (s != null && s.hasSamples() && s.minTime() <= maxt && s.maxTime() >= mint) {
        action.accept(s);
      }
    }
  }

  /** The series with exactly these labels, or null. */
  public @Nullable MemSeries get(Labels labels) {
    return series.get(labels);
  }

  /** Bytes of chunk data held by all series (an estimate for memory reporting). */
  public long chunkBytes() {
    long n = 0;
    for (MemSeries s : series.values()) {
      n += s.chunkBytes();
    }
    return n;
  }
}
