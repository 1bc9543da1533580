package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.LabelNames;
import dev.weir.storage.tsdb.postings.PostingsSource;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.AbstractCollection;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The values of one label name in a head's postings: value → the {@link MemSeries} of a pair only
 * it has, or the {@link PostingList} of the pair. Open addressing over two flat arrays (the
 * value's hash, the entry) at a load between one quarter and one half: 16–32 bytes per value, and
 * no object per value for the collector to copy.
 *
 * <p>The map keeps no copy of a value. A list holds its value's bytes ({@link PostingList#value});
 * the value of a pair only one series has (a pod name, an instance address: about two per series
 * in a Kubernetes head) is read from that series' own labels when a lookup's hash matches. The
 * String and array per such value that this map held before were about 130 bytes per series.
 * The hash is {@link #hash} of the value's UTF-8 bytes, seeded per process.
 *
 * <p>Thread-safety: one writer at a time (the postings' writer), lock-free readers. A slot's hash
 * is written before its entry, the entry with release semantics, and a reader reads the entry with
 * acquire semantics before the hash, so a reader that finds an entry finds its hash, and the
 * entry's fields as they were when it was stored. A replaced entry (a single series becoming a
 * list of the same value) is one reference write in the same slot. Growing and removal build a
 * new table and publish it whole through a volatile field; a reader still probing the old one
 * sees the map as it was (as a concurrent reader of any map may miss a concurrent insert). Every
 * probe run ends in an empty slot because the load stays at most one half.
 */
final class ValueMap {
  private static final int MIN_CAPACITY = 4;
  private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(Object[].class);
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long SEED = new SecureRandom().nextLong();

  /** Hashes and entries of one capacity; never shrunk or grown in place. */
  private static final class Table {
    final int[] hashes;
    final Object[] entries;

    Table(int capacity) {
      hashes = new int[capacity];
      entries = new Object[capacity];
    }
  }

  /** The name's UTF-8 bytes, to find its value among a series' labels. */
  private final byte[] name;
  /** The name's number in {@link LabelNames}, or -1 when series store it in full. */
  private final int nameId;
  private volatile Table table = new Table(MIN_CAPACITY);
  private volatile int size;
  /** Heap bytes of the lists' value arrays ({@link #arrayBytes}); written by the writer only. */
  private volatile long keyBytes;

  /** The values of the label name {@code name} (UTF-8); {@code nameId} its number, or -1. */
  ValueMap(byte[] name, int nameId) {
    this.name = name;
    this.nameId = nameId;
  }

  /** The name's length in UTF-8 bytes. */
  int nameLength() {
    return name.length;
  }

  /** Heap bytes of a byte array of {@code n} elements: its 16-byte header, 8-byte aligned. */
  static long arrayBytes(int n) {
    return (16L + n + 7) & ~7L;
  }

  /**
   * The hash of a value's UTF-8 bytes {@code b[off, off + len)}: eight bytes per step, each
   * multiplied and folded into a state that starts from a per-process random seed, then a 64-bit
   * finalizer. Not String's polynomial, whose collisions anyone can list ("Aa" and "BB", and
   * strings of them): a tenant could pile a million values into one probe run, and each probe that
   * meets an equal hash here walks a series' labels.
   */
  static int hash(byte[] b, int off, int len) {
    long h = SEED ^ len;
    int i = off;
    int end = off + len;
    for (; i <= end - 8; i += 8) {
      h = (h ^ (long) LONGS.get(b, i)) * 0x9E3779B97F4A7C15L;
      h ^= h >>> 29;
    }
    long tail = 0;
    for (int shift = 0; i < end; i++, shift += 8) {
      tail |= (b[i] & 0xffL) << shift;
    }
    h = (h ^ tail) * 0x9E3779B97F4A7C15L;
    h ^= h >>> 32;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return (int) h;
  }

  /**
   * The UTF-8 bytes of a value asked for, or null when it has none: a lone surrogate (which
   * {@link String#getBytes} would turn into '?', finding a series whose value is "?").
   */
  static byte @Nullable [] utf8(String value) {
    for (int i = 0; i < value.length(); i++) {
      if (Character.isSurrogate(value.charAt(i))) {
        try {
          java.nio.ByteBuffer bb = StandardCharsets.UTF_8.newEncoder()
              .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
              .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
              .encode(java.nio.CharBuffer.wrap(value));
          return Arrays.copyOf(bb.array(), bb.limit());
        } catch (java.nio.charset.CharacterCodingException e) {
          return null;
        }
      }
    }
    return value.getBytes(StandardCharsets.UTF_8);
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The entry of {@code value}, or null. Lock-free. */
  @Nullable Object get(String value) {
    byte[] b = utf8(value);
    return b == null ? null : get(b, 0, b.length, hash(b, 0, b.length));
  }

  /** The entry of the value {@code b[off, off + len)}, whose {@link #hash} is {@code hash}, or null. Lock-free. */
  @Nullable Object get(byte[] b, int off, int len, int hash) {
    Table t = table;
    int mask = t.entries.length - 1;
    for (int i = SeriesMap.spread(hash) & mask; ; i = (i + 1) & mask) {
      Object e = ENTRIES.getAcquire(t.entries, i);
      if (e == null) {
        return null;
      }
      if (t.hashes[i] == hash && holds(e, b, off, len)) {
        return e;
      }
    }
  }

  /** Whether entry {@code e} is of the value {@code b[off, off + len)}. */
  private boolean holds(Object e, byte[] b, int off, int len) {
    if (e instanceof PostingList l) {
      byte[] v = l.value();
      return v.length == len && Arrays.equals(v, 0, len, b, off, off + len);
    }
    CompactLabels.Cursor c = valueOf((MemSeries) e);
    return c != null && c.valueEquals(b, off, len);
  }

  /** A cursor on this name's label in series {@code s}, or null when it has none (not one of ours). */
  private CompactLabels.@Nullable Cursor valueOf(MemSeries s) {
    CompactLabels.Cursor c = new CompactLabels.Cursor(s.labelBytes());
    while (c.next()) {
      if (c.nameId >= 0 && c.nameId == nameId) {
        return c;
      }
      if ((c.nameId < 0 || nameId < 0) && c.nameEquals(name, 0, name.length)) {
        return c;
      }
    }
    return null;
  }

  /** The value of entry {@code e} as a String. */
  private String valueString(Object e) {
    if (e instanceof PostingList l) {
      return new String(l.value(), StandardCharsets.UTF_8);
    }
    CompactLabels.Cursor c = valueOf((MemSeries) e);
    return c == null ? "" : c.value();
  }

  /**
   * Adds an entry for a value not in the map, whose {@link #hash} is {@code hash}: a series (the
   * value is read from its labels) or a list of the value. Writer only.
   */
  void insert(int hash, Object entry) {
    Table t = table;
    if ((size + 1) * 2 > t.entries.length) {
      t = copy(t, t.entries.length * 2, null);
    }
    int mask = t.entries.length - 1;
    int i = SeriesMap.spread(hash) & mask;
    while (t.entries[i] != null) {
      i = (i + 1) & mask;
    }
    t.hashes[i] = hash;
    ENTRIES.setRelease(t.entries, i, entry);
    size = size + 1;
    if (entry instanceof PostingList l) {
      keyBytes = keyBytes + arrayBytes(l.value().length);
    }
  }

  /**
   * Replaces entry {@code old}, of a value whose {@link #hash} is {@code hash}, by {@code entry},
   * a list of the same value. Writer only.
   */
  void replace(int hash, Object old, PostingList entry) {
    Table t = table;
    int mask = t.entries.length - 1;
    for (int i = SeriesMap.spread(hash) & mask; ; i = (i + 1) & mask) {
      Object e = t.entries[i];
      if (e == null) {
        throw new IllegalStateException("replacing an entry the map does not hold");
      }
      if (e == old) {
        ENTRIES.setRelease(t.entries, i, entry);
        keyBytes = keyBytes + arrayBytes(entry.value().length)
            - (old instanceof PostingList l ? arrayBytes(l.value().length) : 0);
        return;
      }
    }
  }

  /**
   * Removes the entries for which {@code remove} is true, asking once per value (it may have
   * effects, such as trimming a list), and shrinks the table when it got sparse. Writer only.
   */
  void removeIf(Predicate<Object> remove) {
    Table t = table;
    boolean[] drop = null;
    int kept = 0;
    for (int i = 0; i < t.entries.length; i++) {
      Object e = t.entries[i];
      if (e != null) {
        if (remove.test(e)) {
          if (drop == null) {
            drop = new boolean[t.entries.length];
          }
          drop[i] = true;
          if (e instanceof PostingList l) {
            keyBytes = keyBytes - arrayBytes(l.value().length);
          }
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
    int mask = capacity - 1;
    for (int i = 0; i < t.entries.length; i++) {
      Object e = t.entries[i];
      if (e != null && (drop == null || !drop[i])) {
        int j = SeriesMap.spread(t.hashes[i]) & mask;
        while (n.entries[j] != null) {
          j = (j + 1) & mask;
        }
        n.hashes[j] = t.hashes[i];
        n.entries[j] = e;
      }
    }
    table = n; // the volatile write publishes the filled table
    return n;
  }

  /** Heap bytes of the table (its two arrays), for estimates. */
  long tableBytes() {
    return 2 * (16L + 4L * table.entries.length);
  }

  /** Heap bytes of the value arrays the lists hold (the only copy of a shared value), for estimates. */
  long keyBytes() {
    return keyBytes;
  }

  /**
   * The series refs of each value that {@code matches}, in one pass over the table (a value is
   * decoded once, and not looked up again). Lock-free, like {@link #values()}.
   */
  java.util.List<int[]> refsMatching(Predicate<String> matches) {
    Object[] entries = table.entries;
    java.util.List<int[]> out = new java.util.ArrayList<>();
    if (matches == PostingsSource.ANY) {
      for (int i = 0; i < entries.length; i++) {
        Object e = ENTRIES.getAcquire(entries, i);
        if (e != null) {
          out.add(e instanceof MemSeries one ? new int[] {one.ref()} : ((PostingList) e).snapshot());
        }
      }
      return out;
    }
    // A value is in its series' label bytes or its list's value bytes, scattered over the heap:
    // each block of entries is read in three passes, so that the cache misses of one pass are
    // independent loads the processor overlaps (the entries, then their arrays' first lines,
    // then the rest of each label array) before the values are decoded and tested one by one.
    Object[] block = new Object[WARM_BLOCK];
    int sink = 0;
    for (int from = 0; from < entries.length; from += WARM_BLOCK) {
      int n = 0;
      for (int i = from, end = Math.min(entries.length, from + WARM_BLOCK); i < end; i++) {
        Object e = ENTRIES.getAcquire(entries, i);
        if (e != null) {
          block[n++] = e;
        }
      }
      for (int k = 0; k < n; k++) {
        sink += block[k] instanceof MemSeries s ? s.labelBytes().length : ((PostingList) block[k]).value().length;
      }
      for (int k = 0; k < n; k++) {
        if (block[k] instanceof MemSeries s) {
          byte[] b = s.labelBytes();
          for (int j = 64; j < b.length; j += 64) {
            sink += b[j];
          }
        }
      }
      for (int k = 0; k < n; k++) {
        Object e = block[k];
        if (matches.test(valueString(e))) {
          out.add(e instanceof MemSeries one ? new int[] {one.ref()} : ((PostingList) e).snapshot());
        }
      }
    }
    warmed = sink;
    return out;
  }

  /** Entries read ahead per block by {@link #refsMatching}. */
  private static final int WARM_BLOCK = 32;

  /** What {@link #refsMatching}'s reads ahead summed, kept so that they are not optimized away. */
  @SuppressWarnings("unused")
  private static volatile int warmed;

  /**
   * The values as a live view without a copy of the table: an iteration walks the table of the
   * moment it starts, so it sees each value present then once, and may or may not see those added
   * meanwhile. Each value is a new String.
   */
  java.util.Collection<String> values() {
    return new AbstractCollection<>() {
      @Override
      public Iterator<String> iterator() {
        Object[] entries = table.entries;
        return new Iterator<>() {
          private int i = advance(0);

          private int advance(int from) {
            int j = from;
            while (j < entries.length && ENTRIES.getAcquire(entries, j) == null) {
              j++;
            }
            return j;
          }

          @Override
          public boolean hasNext() {
            return i < entries.length;
          }

          @Override
          public String next() {
            if (i >= entries.length) {
              throw new NoSuchElementException();
            }
            Object e = ENTRIES.getAcquire(entries, i);
            i = advance(i + 1);
            return valueString(e);
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
