package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * A bounded ring of exemplars, Prometheus' {@code CircularExemplarStorage} design: one array of
 * {@code capacity} entries written round-robin, so a new exemplar overwrites the oldest of all
 * series; each series' entries form a linked list from its oldest to its newest, found through an
 * index by series labels. Per series, an exemplar must be newer than the series' newest one: an
 * equal one is a duplicate (a resend, ignored), an older one or one at the same time is out of
 * order and refused. Memory is bounded by {@code capacity} entries (each its labels, at most 128
 * runes by validation, plus about 64 bytes) and the index, which holds only series with an entry.
 *
 * <p>A capacity of 0 stores nothing. {@link #resize} keeps the newest entries that fit.
 *
 * <p>Not thread-safe: the caller synchronizes (see {@link HeadExemplars}).
 */
public final class CircularExemplars {
  /** What {@link #add} did. */
  public enum Outcome {
    ADDED,
    DUPLICATE,
    OUT_OF_ORDER,
    DISABLED
  }

  private static final class Entry {
    final SeriesIndex series;
    final Exemplar exemplar;
    int next = -1;

    Entry(SeriesIndex series, Exemplar exemplar) {
      this.series = series;
      this.exemplar = exemplar;
    }
  }

  private static final class SeriesIndex {
    final Labels labels;
    int oldest;
    int newest;

    SeriesIndex(Labels labels, int slot) {
      this.labels = labels;
      this.oldest = slot;
      this.newest = slot;
    }
  }

  private @Nullable Entry[] entries;
  private int next;
  private int size;
  private final Map<Labels, SeriesIndex> index = new HashMap<>();

  public CircularExemplars(int capacity) {
    entries = new Entry[Math.max(0, capacity)];
  }

  public int capacity() {
    return entries.length;
  }

  /** Exemplars held. */
  public int size() {
    return size;
  }

  /** Series with at least one exemplar. */
  public int seriesCount() {
    return index.size();
  }

  /** Whether {@link #add} would store this exemplar (without storing it). */
  public Outcome check(Labels series, Exemplar e) {
    if (entries.length == 0) {
      return Outcome.DISABLED;
    }
    SeriesIndex idx = index.get(series);
    if (idx == null) {
      return Outcome.ADDED;
    }
    Exemplar newest = entryAt(idx.newest).exemplar;
    if (newest.equals(e)) {
      return Outcome.DUPLICATE;
    }
    return e.timestamp() <= newest.timestamp() ? Outcome.OUT_OF_ORDER : Outcome.ADDED;
  }

  /** Stores the exemplar when {@link #check} allows it, evicting the oldest entry when full. */
  public Outcome add(Labels series, Exemplar e) {
    Outcome o = check(series, e);
    if (o != Outcome.ADDED) {
      return o;
    }
    int slot = next;
    Entry old = entries[slot];
    if (old != null) {
      evict(old);
    } else {
      size++;
    }
    SeriesIndex idx = index.get(series);
    if (idx == null) {
      idx = new SeriesIndex(series, slot);
      index.put(series, idx);
    } else {
      entryAt(idx.newest).next = slot;
      idx.newest = slot;
    }
    entries[slot] = new Entry(idx, e);
    next = (slot + 1) % entries.length;
    return Outcome.ADDED;
  }

  /** The entry in a slot is always its series' oldest (the ring overwrites in insertion order). */
  private void evict(Entry old) {
    SeriesIndex idx = old.series;
    if (old.next < 0) {
      index.remove(idx.labels);
    } else {
      idx.oldest = old.next;
    }
  }

  private Entry entryAt(int slot) {
    Entry e = entries[slot];
    if (e == null) {
      throw new IllegalStateException("exemplar index points at an empty slot " + slot);
    }
    return e;
  }

  /** Changes the capacity, keeping the newest entries that fit (all series' order is kept). */
  public void resize(int capacity) {
    int c = Math.max(0, capacity);
    if (c == entries.length) {
      return;
    }
    List<Entry> inOrder = new ArrayList<>(size);
    for (int i = 0; i < entries.length; i++) {
      Entry e = entries[(next + i) % Math.max(1, entries.length)];
      if (e != null) {
        inOrder.add(e);
      }
    }
    entries = new Entry[c];
    next = 0;
    size = 0;
    index.clear();
    for (int i = Math.max(0, inOrder.size() - c); i < inOrder.size(); i++) {
      Entry e = inOrder.get(i);
      add(e.series.labels, e.exemplar);
    }
  }

  /**
   * The exemplars in {@code [mint, maxt]} of the series matching every matcher, each series'
   * oldest first; series in label order.
   */
  public List<SeriesExemplars> select(long mint, long maxt, List<Matcher> matchers) {
    List<SeriesExemplars> out = new ArrayList<>();
    for (SeriesIndex idx : index.values()) {
      if (!matchesAll(idx.labels, matchers)) {
        continue;
      }
      List<Exemplar> found = new ArrayList<>();
      for (int s = idx.oldest; s >= 0; s = entryAt(s).next) {
        Exemplar e = entryAt(s).exemplar;
        if (e.timestamp() > maxt) {
          break; // newer ones follow
        }
        if (e.timestamp() >= mint) {
          found.add(e);
        }
      }
      if (!found.isEmpty()) {
        out.add(new SeriesExemplars(idx.labels, found));
      }
    }
    out.sort((a, b) -> a.seriesLabels().compareTo(b.seriesLabels()));
    return out;
  }

  private static boolean matchesAll(Labels l, List<Matcher> matchers) {
    for (Matcher m : matchers) {
      if (!m.matches(l)) {
        return false;
      }
    }
    return true;
  }

  /** Every entry from the oldest to the newest, with its series' labels. */
  public void forEach(BiConsumer<Labels, Exemplar> action) {
    for (int i = 0; i < entries.length; i++) {
      Entry e = entries[(next + i) % entries.length];
      if (e != null) {
        action.accept(e.series.labels, e.exemplar);
      }
    }
  }
}
