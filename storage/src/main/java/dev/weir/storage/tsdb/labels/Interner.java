package dev.weir.storage.tsdb.labels;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Deduplicates label strings so that the many series sharing a name or value share one String.
 * Only strings of series that are actually created are interned, so the table grows with the
 * number of distinct strings in the head, not with the request rate.
 *
 * <p><b>Bound.</b> Entries are reference-counted: every {@link #intern} is paired with a
 * {@link #release} when its holder (a head series) goes away — removed by head truncation or
 * dropped at the end of a replay. A string stays exactly as long as some live series uses it, so
 * the table is bounded by the distinct strings of the live series of all heads; series churn
 * (e.g. a pod label changing on every deploy) no longer leaks heap.
 *
 * <p><b>Layout.</b> A string costs its own object and bytes plus one slot of two flat arrays (the
 * string and its holder count) in an open-addressing table, about 8 bytes per slot at a load of
 * at most one half: no map node or entry object per string (those were 56 bytes of the 104 a
 * string cost before; with high-cardinality labels a series has a couple of strings of its own).
 *
 * <p>Thread-safe: the table is split into {@value #STRIPES} stripes by hash, each guarded by its
 * own monitor. Interning and releasing happen on series creation and removal only, not per
 * sample.
 */
public final class Interner {
  /**
   * Heap cost of one interned string beyond its characters: String object (24), byte[] header
   * (16), and two table slots (reference 4, count 4) at a load between one quarter and one half
   * (16 amortized).
   */
  static final int PER_STRING_BYTES = 24 + 16 + 16;

  private static final int STRIPES = 64;
  private static final int MIN_CAPACITY = 16;

  /** One stripe: linear probing over {@code keys}; {@code refs[i]} holders of {@code keys[i]}. */
  private static final class Stripe {
    String[] keys = new String[MIN_CAPACITY];
    int[] refs = new int[MIN_CAPACITY];
    int size;

    /** The slot holding {@code s}, or the free slot where it would go. */
    int slot(String s, int hash) {
      int mask = keys.length - 1;
      int i = hash & mask;
      while (true) {
        String k = keys[i];
        if (k == null || k.equals(s)) {
          return i;
        }
        i = (i + 1) & mask;
      }
    }

    void resize(int capacity) {
      String[] oldKeys = keys;
      int[] oldRefs = refs;
      keys = new String[capacity];
      refs = new int[capacity];
      for (int j = 0; j < oldKeys.length; j++) {
        String k = oldKeys[j];
        if (k != null) {
          int i = slot(k, spread(k.hashCode()));
          keys[i] = k;
          refs[i] = oldRefs[j];
        }
      }
    }

    /** Empties slot {@code i}, moving later entries of its probe run back so lookups still find them. */
    void delete(int i) {
      int mask = keys.length - 1;
      int hole = i;
      int j = i;
      while (true) {
        j = (j + 1) & mask;
        String k = keys[j];
        if (k == null) {
          break;
        }
        int home = spread(k.hashCode()) & mask;
        // k may fill the hole unless its home lies cyclically in (hole, j].
        boolean homeBetween = hole <= j ? home > hole && home <= j : home > hole || home <= j;
        if (!homeBetween) {
          keys[hole] = k;
          refs[hole] = refs[j];
          hole = j;
        }
      }
      keys[hole] = null;
      refs[hole] = 0;
    }
  }

  private final Stripe[] stripes = new Stripe[STRIPES];
  private final AtomicLong bytes = new AtomicLong();

  public Interner() {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new Stripe();
    }
  }

  /** Mixes the high bits of a String hash into the low ones, which pick the stripe and the slot. */
  static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B1;
  }

  private Stripe stripe(int hash) {
    return stripes[hash >>> 26];
  }

  /** The shared copy of {@code s}, counting one more holder; pair with {@link #release(String)}. */
  public String intern(String s) {
    int hash = spread(s.hashCode());
    Stripe st = stripe(hash);
    synchronized (st) {
      int i = st.slot(s, hash);
      String k = st.keys[i];
      if (k != null) {
        st.refs[i]++;
        return k;
      }
      st.keys[i] = s;
      st.refs[i] = 1;
      st.size++;
      bytes.addAndGet(PER_STRING_BYTES + s.length());
      if (st.size * 2 > st.keys.length) {
        st.resize(st.keys.length * 2);
      }
      return s;
    }
  }

  /** One holder of {@code s} is gone; the entry goes when the last one is. */
  public void release(String s) {
    int hash = spread(s.hashCode());
    Stripe st = stripe(hash);
    synchronized (st) {
      int i = st.slot(s, hash);
      if (st.keys[i] == null || --st.refs[i] > 0) {
        return;
      }
      st.delete(i);
      st.size--;
      bytes.addAndGet(-(PER_STRING_BYTES + s.length()));
      if (st.keys.length > MIN_CAPACITY && st.size * 8 < st.keys.length) {
        st.resize(st.keys.length / 2);
      }
    }
  }

  /** Estimated heap bytes of the interned strings and the table. */
  public long bytesEstimate() {
    return bytes.get();
  }

  /**
   * Returns labels whose strings are all interned (a new object; the input is not changed); pair
   * with {@link #release(Labels)}.
   */
  public Labels intern(Labels labels) {
    String[] src = labels.pairsUnsafe();
    String[] dst = new String[src.length];
    for (int i = 0; i < src.length; i++) {
      dst[i] = intern(src[i]);
    }
    return Labels.ofSortedPairs(dst);
  }

  /**
   * Interns the strings of {@code labels} in place: each is replaced in the labels' own array by
   * its shared copy, which is equal, so the labels' equality and hash do not change. Saves the
   * array and object {@link #intern(Labels)} allocates, where the caller's labels can be kept
   * (series creation). Pair with {@link #release(Labels)}.
   *
   * @return {@code labels}
   */
  public Labels internInPlace(Labels labels) {
    String[] pairs = labels.pairsUnsafe();
    for (int i = 0; i < pairs.length; i++) {
      pairs[i] = intern(pairs[i]);
    }
    return labels;
  }

  /** Releases every string of labels returned by {@link #intern(Labels)}. */
  public void release(Labels labels) {
    for (String s : labels.pairsUnsafe()) {
      release(s);
    }
  }

  /** Distinct strings held. */
  public int size() {
    int n = 0;
    for (Stripe st : stripes) {
      synchronized (st) {
        n += st.size;
      }
    }
    return n;
  }

  /** How many holders {@code s} has (0 when it is not interned); for tests. */
  int refs(String s) {
    int hash = spread(s.hashCode());
    Stripe st = stripe(hash);
    synchronized (st) {
      int i = st.slot(s, hash);
      return st.keys[i] == null ? 0 : st.refs[i];
    }
  }

  public void clear() {
    for (Stripe st : stripes) {
      synchronized (st) {
        st.keys = new String[MIN_CAPACITY];
        st.refs = new int[MIN_CAPACITY];
        st.size = 0;
      }
    }
    bytes.set(0);
  }
}
