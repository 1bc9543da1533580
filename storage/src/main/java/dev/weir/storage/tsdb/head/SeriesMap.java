package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.SeriesKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A tenant head's series by labels: an open-addressing table of {@link MemSeries} references (the
 * labels are the series' own compact bytes, {@link dev.weir.storage.tsdb.labels.CompactLabels}), so a series costs one table slot, 4–8 bytes at a load of at most
 * one half, where a {@code ConcurrentHashMap} spent a 32-byte node and a slot (about 72 bytes per
 * series with the table).
 *
 * <p>Thread-safety: {@link #put} and {@link #remove} are called by one writer at a time (the
 * head's create lock). {@link #get} and {@link #snapshot} are lock-free: a slot is written with a
 * release store and read with an acquire load (a series' label bytes are not final: a replayed
 * series gets its value numbers later, {@link MemSeries#numberValues}), a grown table is published
 * whole through a volatile field and never written again, and
 * every probe run ends in an empty slot because the load stays at most one half. A removal moves
 * later entries of its probe run back, so a reader racing with it could miss a present series:
 * removals bump a sequence number before and after (odd while one is under way, as a seqlock),
 * and a reader that saw it change looks again. Insertions only fill empty slots and need no retry.
 */
final class SeriesMap {
  private static final int MIN_CAPACITY = 64;
  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(MemSeries[].class);

  private volatile MemSeries[] table = new MemSeries[MIN_CAPACITY];
  private volatile int size;
  /** Odd while a removal is moving entries; bumped twice per removal. */
  private volatile int removals;

  static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B1;
  }

  int size() {
    return size;
  }

  /**
   * The series whose labels equal {@code key}: a {@link Labels}, or a key made from a pushed
   * series' bytes (which may miss equal labels sent in a non-canonical form, see
   * {@link SeriesKey#matches}).
   */
  @Nullable MemSeries get(SeriesKey key) {
    if (key instanceof Labels l) {
      key = l.encoded(); // encoded once here, not per probed series
    }
    while (true) {
      int seq = removals;
      MemSeries s = probe(key);
      VarHandle.acquireFence(); // the probe's reads happen before the sequence is read again
      if (s != null || ((seq & 1) == 0 && removals == seq)) {
        return s;
      }
      Thread.onSpinWait();
    }
  }

  private @Nullable MemSeries probe(SeriesKey key) {
    int hash = key.hashCode();
    MemSeries[] t = table;
    int mask = t.length - 1;
    for (int i = spread(hash) & mask; ; i = (i + 1) & mask) {
      MemSeries s = (MemSeries) SLOTS.getAcquire(t, i);
      if (s == null) {
        return null;
      }
      if (s.labelsHash() == hash && key.matches(s.labelBytes())) {
        return s;
      }
    }
  }

  /** Adds a series whose labels are not in the map yet; the caller holds the writer lock. */
  void put(MemSeries s) {
    MemSeries[] t = table;
    if ((size + 1) * 2 > t.length) {
      t = rebuilt(t, t.length * 2);
    }
    SLOTS.setRelease(t, freeSlot(t, s.labelsHash()), s);
    // The volatile write publishes the slot to readers that read size before the table.
    size = size + 1;
  }

  /**
   * Reads what the lookups of the series hashed {@code hashOf(from..to-1)} and their appends will
   * read first (each hash's home slot, its series, every cache line of its label bytes, the byte
   * of its chunk buffer the next sample goes to), in a loop of independent loads, so that the
   * processor overlaps their cache misses instead of waiting for them one lookup at a time.
   * Changes nothing; the result only keeps the loads from being optimized away. Lock-free, like
   * {@link #get}.
   */
  int warm(java.util.function.IntUnaryOperator hashOf, int from, int to) {
    MemSeries[] t = table;
    int mask = t.length - 1;
    int sink = 0;
    for (int k = from; k < to; k++) {
      MemSeries s = (MemSeries) SLOTS.getOpaque(t, spread(hashOf.applyAsInt(k)) & mask); // a hint: no ordering
      if (s != null) {
        sink += s.warm();
      }
    }
    return sink;
  }

  /** Removes this series (the same object), if present; the caller holds the writer lock. */
  void remove(MemSeries series) {
    MemSeries[] t = table;
    int mask = t.length - 1;
    int i = spread(series.labelsHash()) & mask;
    while (true) {
      MemSeries s = t[i];
      if (s == null) {
        return;
      }
      if (s == series) {
        break;
      }
      i = (i + 1) & mask;
    }
    removals = removals + 1;
    VarHandle.releaseFence(); // readers see the odd sequence before any entry moves
    // Backward shift: move later entries of the probe run into the hole unless their home slot
    // lies cyclically in (hole, j].
    int hole = i;
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      MemSeries s = t[j];
      if (s == null) {
        break;
      }
      int home = spread(s.labelsHash()) & mask;
      boolean homeBetween = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!homeBetween) {
        SLOTS.setRelease(t, hole, s);
        hole = j;
      }
    }
    t[hole] = null;
    size = size - 1;
    if (t.length > MIN_CAPACITY && size * 8 < t.length) {
      rebuilt(t, t.length / 2);
    }
    removals = removals + 1;
  }

  /**
   * The series present now, each once, in a new list (a series inserted meanwhile may or may not
   * be in it).
   */
  List<MemSeries> snapshot() {
    while (true) {
      int seq = removals;
      MemSeries[] t = table;
      List<MemSeries> out = new ArrayList<>(size);
      for (int i = 0; i < t.length; i++) {
        MemSeries s = (MemSeries) SLOTS.getAcquire(t, i);
        if (s != null) {
          out.add(s);
        }
      }
      VarHandle.acquireFence();
      if ((seq & 1) == 0 && removals == seq) {
        return out;
      }
      Thread.onSpinWait();
    }
  }

  /**
   * Calls {@code action} for the series in the table without copying it, for counts and estimates
   * that may be off by the few series a concurrent removal moves (seen twice or not at all).
   */
  void forEachApproximately(java.util.function.Consumer<MemSeries> action) {
    MemSeries[] t = table;
    for (int i = 0; i < t.length; i++) {
      MemSeries s = (MemSeries) SLOTS.getAcquire(t, i);
      if (s != null) {
        action.accept(s);
      }
    }
  }

  /** Copies {@code t} into a new table of {@code capacity} slots and publishes it. */
  private MemSeries[] rebuilt(MemSeries[] t, int capacity) {
    MemSeries[] n = new MemSeries[capacity];
    for (MemSeries s : t) {
      if (s != null) {
        n[freeSlot(n, s.labelsHash())] = s;
      }
    }
    table = n;
    return n;
  }

  private static int freeSlot(MemSeries[] t, int hash) {
    int mask = t.length - 1;
    int i = spread(hash) & mask;
    while (t[i] != null) {
      i = (i + 1) & mask;
    }
    return i;
  }
}
