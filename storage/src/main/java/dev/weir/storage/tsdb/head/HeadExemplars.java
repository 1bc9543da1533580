package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.wal.ExemplarRecords;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalRecords;
import dev.weir.storage.util.ByteSink;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * A tenant's exemplars: a {@link CircularExemplars} whose capacity follows the tenant's limit
 * (read at every commit, so a changed override applies at the next push), logged in the WAL as
 * record type 4 before they are stored, replayed from it, and written into checkpoints for the
 * series still in the head.
 *
 * <p>Commit = check, log, apply, under the head's append lock (the lock that orders SERIES
 * records before the records that use them); a commit fails whole when the WAL write fails.
 *
 * <p>Thread-safe.
 */
public final class HeadExemplars {
  private final TenantHead head;
  private volatile IntSupplier limit = () -> 0;
  private final CircularExemplars ring = new CircularExemplars(0);

  HeadExemplars(TenantHead head) {
    this.head = head;
  }

  /** Where the capacity comes from: the tenant's current exemplar limit (0: none stored). */
  public void limit(IntSupplier l) {
    this.limit = l;
  }

  /** What a commit did with its exemplars. */
  public record Result(int added, int duplicates, int outOfOrder, int disabled,
      dev.weir.storage.tsdb.labels.@org.jspecify.annotations.Nullable Labels firstOutOfOrder) {}

  private void applyLimit() {
    int l = Math.max(0, limit.getAsInt());
    if (l != ring.capacity()) {
      ring.resize(l);
    }
  }

  /**
   * Stores exemplars {@code [0, n)}: checks each against its series' newest (and the ones before
   * it in the batch), logs the accepted ones (after SERIES records of series not yet logged) and
   * applies them. A series removed by truncation meanwhile is skipped (counted as out of order:
   * its data left the head).
   *
   * @param durable wait for the WAL fsync before returning
   * @throws dev.weir.storage.errors.ServerErrorException when the WAL write failed (nothing stored)
   */
  Result commit(MemSeries[] series, Exemplar[] exemplars, int n, boolean durable) {
    if (n == 0) {
      return new Result(0, 0, 0, 0, null);
    }
    int dup = 0;
    int ooo = 0;
    int disabled = 0;
    Labels firstOoo = null;
    long lsn = 0;
    List<MemSeries> accS = new ArrayList<>();
    List<Exemplar> accE = new ArrayList<>();
    head.appendLock().lock();
    try {
      synchronized (ring) {
        applyLimit();
        // Check against the ring plus what this batch accepted before: a scratch ring is too
        // costly, so the batch's own newest per series is tracked here.
        java.util.Map<MemSeries, Exemplar> batchNewest = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
          MemSeries s = series[i];
          Exemplar e = exemplars[i];
          if (s.removed) {
            // Truncation removed the series after the caller looked it up; the sample commit just
            // before recreated it (and logged its record): the exemplar belongs to the live one.
            MemSeries live = head.get(s.labels());
            if (live == null || live.removed || !live.logged) {
              ooo++;
              firstOoo = firstOoo == null ? s.labels() : firstOoo;
              continue;
            }
            s = live;
          }
          Exemplar prev = batchNewest.get(s);
          CircularExemplars.Outcome o;
          if (prev == null) {
            o = ring.check(s.labels(), e);
          } else if (prev.equals(e)) {
            o = CircularExemplars.Outcome.DUPLICATE;
          } else {
            o = e.timestamp() <= prev.timestamp() ? CircularExemplars.Outcome.OUT_OF_ORDER
                : CircularExemplars.Outcome.ADDED;
          }
          switch (o) {
            case ADDED -> {
              accS.add(s);
              accE.add(e);
              batchNewest.put(s, e);
            }
            case DUPLICATE -> dup++;
            case OUT_OF_ORDER -> {
              ooo++;
              firstOoo = firstOoo == null ? s.labels() : firstOoo;
            }
            case DISABLED -> disabled++;
          }
        }
      }
      Wal w = head.wal();
      if (!accS.isEmpty() && w != null) {
        lsn = log(w, accS, accE);
      }
      synchronized (ring) {
        for (int i = 0; i < accS.size(); i++) {
          ring.add(accS.get(i).labels(), accE.get(i));
        }
      }
    } finally {
      head.appendLock().unlock();
    }
    Wal w = head.wal();
    if (durable && lsn > 0 && w != null) {
      w.awaitDurable(lsn);
    }
    return new Result(accS.size(), dup, ooo, disabled, firstOoo);
  }

  private long log(Wal w, List<MemSeries> s, List<Exemplar> e) {
    ByteSink sink = new ByteSink(1024);
    List<MemSeries> unlogged = new ArrayList<>();
    for (MemSeries m : s) {
      if (!m.logged && !unlogged.contains(m)) {
        unlogged.add(m);
      }
    }
    if (!unlogged.isEmpty()) {
      int[] r = new int[unlogged.size()];
      byte[][] l = new byte[unlogged.size()][];
      for (int i = 0; i < r.length; i++) {
        r[i] = unlogged.get(i).ref();
        l[i] = unlogged.get(i).labelBytes();
      }
      WalRecords.seriesCompact(sink, r, l, r.length, head.walRecordBytes());
    }
    int n = s.size();
    int[] refs = new int[n];
    long[] ts = new long[n];
    double[] vs = new double[n];
    Labels[] ls = new Labels[n];
    for (int i = 0; i < n; i++) {
      refs[i] = s.get(i).ref();
      ts[i] = e.get(i).timestamp();
      vs[i] = e.get(i).value();
      ls[i] = e.get(i).labels();
    }
    ExemplarRecords.write(sink, refs, ts, vs, ls, n, head.walRecordBytes());
    long lsn = w.append(sink);
    for (MemSeries m : unlogged) {
      m.logged = true;
    }
    return lsn;
  }

  /**
   * An exemplar record from the WAL: stored unless it is a duplicate or out of order (a
   * checkpoint and the segments after it may both hold it).
   *
   * @return false when the ref is unknown
   */
  public boolean replay(int ref, long t, double v, Labels labels) {
    MemSeries s = head.byRef(ref);
    if (s == null) {
      return false;
    }
    synchronized (ring) {
      applyLimit();
      ring.add(s.labels(), new Exemplar(labels, v, t));
    }
    return true;
  }

  /** Exemplars in {@code [mint, maxt]} of the series matching all matchers, in label order. */
  public List<SeriesExemplars> select(long mint, long maxt, List<Matcher> matchers) {
    synchronized (ring) {
      return ring.select(mint, maxt, matchers);
    }
  }

  /** Exemplars held. */
  public int size() {
    synchronized (ring) {
      return ring.size();
    }
  }

  /**
   * Appends the exemplars of series still in the head, oldest first, as WAL records (for a
   * checkpoint, whose SERIES records hold those series).
   */
  public void writeLive(ByteSink sink) {
    List<Integer> refs = new ArrayList<>();
    List<Exemplar> ex = new ArrayList<>();
    synchronized (ring) {
      ring.forEach((series, e) -> {
        MemSeries s = head.get(series);
        if (s != null && s.logged) {
          refs.add(s.ref());
          ex.add(e);
        }
      });
    }
    int n = refs.size();
    if (n == 0) {
      return;
    }
    int[] r = new int[n];
    long[] ts = new long[n];
    double[] vs = new double[n];
    Labels[] ls = new Labels[n];
    for (int i = 0; i < n; i++) {
      r[i] = refs.get(i);
      ts[i] = ex.get(i).timestamp();
      vs[i] = ex.get(i).value();
      ls[i] = ex.get(i).labels();
    }
    ExemplarRecords.write(sink, r, ts, vs, ls, n, WalRecords.MAX_WRITE_PAYLOAD_BYTES);
  }
}
