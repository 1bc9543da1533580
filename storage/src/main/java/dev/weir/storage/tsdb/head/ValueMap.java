package dev.weir.storage.tsdb.head;

import dev.weir.storage.util.AsciiHash;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.AbstractCollection;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.BiPredicate;
import org.jspecify.annotations.Nullable;

/**
 * The values of one label name in a head's postings: value → the {@link MemSeries} of a pair only
 * it has, or the {@link PostingList} of the pair. Open addressing over two flat arrays (value,
 * entry) at a load between one quarter and one half: 16–32 bytes per value where a
 * {@code ConcurrentHashMap} spent a 32-byte node and its table slot (36–43 bytes), and no object
 * per value for the collector to copy (with a pod and an instance label, a head has about two
 * values per series).
 *
 * <p>Thread-safety: one writer at a time (the postings' writer), lock-free readers. A slot's entry
 * is stored before its key, both with release semantics, and read after it with acquire
 * semantics, so a reader that finds a key finds its entry, and an entry's fields as they were when
 * it was stored. A replaced entry (a single series becoming a list) is one reference write.
 * Growing and removal build a new table and publish it whole through a volatile field; a reader
 * still probing the old one sees the map as it was (as a concurrent reader of any map may miss a
 * concurrent insert). Every probe run ends in an empty slot because the load stays at most one
 * half.
 */
final class ValueMap {
  private static final int MIN_CAPACITY = 4;
  private static final VarHandle KEYS = MethodHandles.arrayElementVarHandle(String[].class);
  private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(Object[].class);

  /** Keys and entries of one capacity; never shrunk or grown in place. */
  private static final class Table {
    final String[] keys;
    final Object[] entries;

    Table(int capacity) {
      keys = new String[capacity];
      entries = new Object[capacity];
    }
  }

  private volatile Table table = new Table(MIN_CAPACITY);
  private volatile int size;
  /** Heap bytes of the value strings ({@link #stringBytes}); written by the writer only. */
  private volatile long keyBytes;

  /** Heap bytes of a String of Latin-1 characters: its object (24) and its array, 8-byte aligned. */
  static long stringBytes(String s) {
    return 24 + ((16L + s.length() + 7) & ~7L);
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The entry of {@code value}, or null. Lock-free. */
  @Nullable Object get(String value) {
    Table t = table;
    int hash = value.hashCode();
    int mask = t.keys.length - 1;
    for (int i = SeriesMap.spread(hash) & mask; ; i = (i + 1) & mask) {
      String k = (String) KEYS.getAcquire(t.keys, i);
      if (k == null) {
        return null;
      }
      if (k == value || (k.hashCode() == hash && k.equals(value))) {
        return ENTRIES.getAcquire(t.entries, i);
      }
    }
  }

  /**
   * The key equal to the UTF-8 bytes {@code b[off, off + len)} when they are ASCII and the key is
   * present, else null (a caller then makes the String). Lock-free, like {@link #get}.
   */
  @Nullable String keyOf(byte[] b, int off, int len) {
    long h = AsciiHash.of(b, off, len);
    if (h < 0) {
      return null;
    }
    int hash = (int) h;
    Table t = table;
    int mask = t.keys.length - 1;
    for (int i = SeriesMap.spread(hash) & mask; ; i = (i + 1) & mask) {
      String k = (String) KEYS.getAcquire(t.keys, i);
      if (k == null) {
        return null;
      }
      if (k.hashCode() == hash && sameAscii(k, b, off, len)) {
        return k;
      }
    }
  }

  /** Whether {@code s} is the ASCII bytes {@code b[off, off + len)}. */
  static boolean sameAscii(String s, byte[] b, int off, int len) {
    if (s.length() != len) {
      return false;
    }
    for (int i = 0; i < len; i++) {
      if (s.charAt(i) != b[off + i]) {
        return false;
      }
    }
    return true;
  }

  /** Sets the entry of {@code value}, adding the value when it is new. Writer only. */
  void put(String value, Object entry) {
    Table t = table;
    int i = slot(t, value);
    if (t.keys[i] != null) {
      ENTRIES.setRelease(t.entries, i, entry);
      return;
    }
    if ((size + 1) * 2 > t.keys.length) {
      t = copy(t, t.keys.length * 2, null);
      i = slot(t, value);
    }
    ENTRIES.setRelease(t.entries, i, entry);
    KEYS.setRelease(t.keys, i, value);
    size = size + 1;
    keyBytes = keyBytes + stringBytes(value);
  }

  /**
   * Removes the values for which {@code remove} (value, entry) is true, asking once per value (it
   * may have effects, such as trimming a list), and shrinks the table when it got sparse. Writer
   * only.
   */
  void removeIf(BiPredicate<String, Object> remove) {
    Table t = table;
    boolean[] drop = null;
    int kept = 0;
    for (int i = 0; i < t.keys.length; i++) {
      String k = t.keys[i];
      if (k != null) {
        if (remove.test(k, t.entries[i])) {
          if (drop == null) {
            drop = new boolean[t.keys.length];
          }
          drop[i] = true;
          keyBytes = keyBytes - stringBytes(k);
        } else {
          kept++;
        }
      }
    }
    if (drop == null) {
      return;
    }
    int capacity = MIN_CAPACITY;
    while (kept * 2 > capacity) {
      capacity *= 2;
    }
    copy(t, capacity, drop);
    size = kept;
  }

  /** Copies the entries of {@code t} not marked in {@code drop} into a new table, and publishes it. */
  private Table copy(Table t, int capacity, boolean @Nullable [] drop) {
    Table n = new Table(capacity);
    for (int i = 0; i < t.keys.length; i++) {
      String k = t.keys[i];
      if (k != null && (drop == null || !drop[i])) {
        int j = slot(n, k);
        n.keys[j] = k;
        n.entries[j] = t.entries[i];
      }
    }
    table = n; // the volatile write publishes the filled table
    return n;
  }

  /** The slot holding {@code value} in {@code t}, or the empty slot where it would go. */
  private static int slot(Table t, String value) {
    int hash = value.hashCode();
    int mask = t.keys.length - 1;
    for (int i = SeriesMap.spread(hash) & mask; ; i = (i + 1) & mask) {
      String k = t.keys[i];
      if (k == null || k == value || (k.hashCode() == hash && k.equals(value))) {
        return i;
      }
    }
  }

  /** Heap bytes of the table (its two arrays), for estimates. */
  long tableBytes() {
    return 2 * (16L + 4L * table.keys.length);
  }

  /** Heap bytes of the value strings the table holds (the only copy a head keeps), for estimates. */
  long keyBytes() {
    return keyBytes;
  }

  /**
   * The values as a live view without a copy: an iteration walks the table of the moment it
   * starts, so it sees each value present then once, and may or may not see those added meanwhile.
   */
  java.util.Collection<String> values() {
    return new AbstractCollection<>() {
      @Override
      public Iterator<String> iterator() {
        String[] keys = table.keys;
        return new Iterator<>() {
          private int i = advance(0);

          private int advance(int from) {
            int j = from;
            while (j < keys.length && KEYS.getAcquire(keys, j) == null) {
              j++;
            }
            return j;
          }

          @Override
          public boolean hasNext() {
            return i < keys.length;
          }

          @Override
          public String next() {
            if (i >= keys.length) {
              throw new NoSuchElementException();
            }
            String k = (String) KEYS.getAcquire(keys, i);
            i = advance(i + 1);
            return k;
          }
        };
      }

      @Override
      public int size() {
        return size;
      }
    };
  }
}
