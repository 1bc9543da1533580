package dev.weir.storage.tsdb.labels;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The process' dictionary of label values, so that a head series stores a value that many series
 * share (a metric name, a job, a namespace, a bucket bound) as a number of up to three bytes
 * ({@link CompactLabels}) instead of its text, as {@link LabelNames} does for names. One per
 * process, shared by every tenant, and it never forgets a value: a value it holds is always the
 * same number and any other is never one, so equal labels have one form in the process (but for
 * replayed series, which keep their values in full until their head's index build numbers them);
 * and a query that holds a series the head has just dropped still reads its values (a number is
 * never given to another value).
 *
 * <p>What gets in is decided when a value is first seen, and never changes afterwards: a value of a
 * name in {@link LabelNames}, of at most {@link #MAX_VALUE_BYTES} bytes, while that name has fewer
 * than {@link #MAX_PER_NAME} values here and the dictionary fewer than {@link #MAX_VALUES}. A
 * name's first values fill its share whatever its cardinality: for a pod or instance label those
 * are a few thousand values that then stay (bounded, at most ~0.3 MiB per name); from then on its
 * values are stored in full in each series, as before, while low-cardinality names keep finding
 * theirs. When full it holds about 13 MiB; a tenant that invents values costs memory (its own and,
 * by filling the shares, other tenants' savings), never correctness.
 *
 * <p>Thread-safe: lookups are lock-free (an entry is published before the slot that leads to it,
 * and tables are replaced, never changed in place, when they grow), additions take a lock.
 */
public final class LabelValues {
  /** Values the dictionary holds at most: a number below it, doubled plus one, is a varint of at most three bytes. */
  public static final int MAX_VALUES = 1 << 17;
  /** Values per label name at most. */
  public static final int MAX_PER_NAME = 4096;
  /** Longer values are never added: they stay in full in their series. */
  public static final int MAX_VALUE_BYTES = 64;

  private static final Table PROCESS = new Table(MAX_VALUES, MAX_PER_NAME);

  private LabelValues() {}

  /**
   * The number of the value {@code b[off, off + len)} of the name numbered {@code nameId} in
   * {@link LabelNames}, added if new and allowed, or -1 when it is stored in full (see the class).
   */
  public static int id(int nameId, byte[] b, int off, int len) {
    return PROCESS.id(nameId, b, off, len);
  }

  /** The UTF-8 bytes of value {@code id} (callers must not modify them); see {@link Table#bytes}. */
  public static byte[] bytes(int id) {
    return PROCESS.bytes(id);
  }

  /** Values in the dictionary now. */
  public static int size() {
    return PROCESS.size();
  }

  /** Heap bytes of the dictionary now: its tables and each value's array. */
  public static long bytesEstimate() {
    return PROCESS.bytesEstimate();
  }

  /** A dictionary with its own bounds: the process' one, or a small one in tests. */
  static final class Table {
    private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(byte[][].class);
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle LONGS =
        MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final int ID_BITS = 18;
    private static final int ID_MASK = (1 << ID_BITS) - 1;
    private static final int TAG_BITS = 13;

    private final int maxValues;
    private final int maxPerName;
    /** Entry bytes by number; replaced by a longer copy when full (numbers stay). */
    private volatile byte[][] entries = new byte[1024][];
    /** Per entry: the name number it was added for (one text under two names is two entries). */
    private volatile int[] names = new int[1024];
    /**
     * Open addressing by {@link #hash}: per slot the value's number + 1 in the low
     * {@value #ID_BITS} bits and {@value #TAG_BITS} more bits of its hash above them (a probe
     * passes other values without reading them), or 0; replaced when it grows.
     */
    private volatile int[] slots = new int[2048];
    /** Values per name number, each set with a release store after the value's slot. */
    private final int[] perName = new int[LabelNames.MAX_NAMES];
    private final Object lock = new Object();
    private int count;
    /** Heap bytes of the entries' arrays (header and padding included). */
    private long entryBytes;
    /** Set once {@link #count} reached the bound, after the last value's slot. */
    private volatile boolean full;
    /** The hash's starting value, random per table (see {@link LabelNames}' hash). */
    private final long seed = new java.security.SecureRandom().nextLong() | 1;

    Table(int maxValues, int maxPerName) {
      if (maxValues >= ID_MASK) {
        throw new IllegalArgumentException("at most " + (ID_MASK - 1) + " values");
      }
      this.maxValues = maxValues;
      this.maxPerName = maxPerName;
    }

    int id(int nameId, byte[] b, int off, int len) {
      if (nameId < 0 || len > MAX_VALUE_BYTES) {
        return -1;
      }
      int h = hash(nameId, b, off, len);
      int found = find(nameId, b, off, len, h);
      if (found >= 0) {
        return found;
      }
      if (full || (int) INTS.getAcquire(perName, nameId) >= maxPerName) {
        // No room since the miss (without the lock: a high-cardinality name's new values come here
        // every time). The value may have been the last one added, by another thread, and the
        // bound is set after its slot: look again, so that a value has one answer.
        return find(nameId, b, off, len, h);
      }
      synchronized (lock) {
        found = find(nameId, b, off, len, h);
        if (found >= 0 || count == maxValues || perName[nameId] == maxPerName) {
          return found;
        }
        int id = count;
        byte[][] e = entries;
        int[] n = names;
        if (id == e.length) {
          e = Arrays.copyOf(e, 2 * e.length);
          n = Arrays.copyOf(n, 2 * n.length);
        }
        e[id] = Arrays.copyOfRange(b, off, off + len);
        n[id] = nameId;
        names = n;
        entries = e; // a volatile write: the entry and its name before any slot that leads to them
        int[] s = slots;
        if (2 * (id + 1) > s.length) {
          s = rehash(e, n, 2 * s.length);
          slots = s;
        }
        insert(s, h, id);
        count = id + 1;
        entryBytes += 16 + ((len + 7) & ~7);
        INTS.setRelease(perName, nameId, perName[nameId] + 1);
        if (count == maxValues) {
          full = true;
        }
        return id;
      }
    }

    private static void insert(int[] s, int h, int id) {
      int mask = s.length - 1;
      int i = h & mask;
      while ((int) INTS.getAcquire(s, i) != 0) {
        i = (i + 1) & mask;
      }
      INTS.setRelease(s, i, tag(h) << ID_BITS | (id + 1));
    }

    /** The hash's bits a slot keeps: its top ones (the table's index takes the low ones). */
    private static int tag(int h) {
      return h >>> (32 - TAG_BITS);
    }

    /** A table of {@code size} slots with every entry below {@link #count}. Lock held. */
    private int[] rehash(byte[][] e, int[] n, int size) {
      int[] s = new int[size];
      for (int id = 0; id < count; id++) {
        byte[] v = e[id];
        insert(s, hash(n[id], v, 0, v.length), id);
      }
      return s;
    }

    /** The number of a value already in the dictionary, or -1. */
    private int find(int nameId, byte[] b, int off, int len, int h) {
      int[] s = slots;
      byte[][] e = entries;
      int[] n = names;
      int mask = s.length - 1;
      int tag = tag(h);
      for (int i = h & mask; ; i = (i + 1) & mask) {
        int slot = (int) INTS.getAcquire(s, i);
        if (slot == 0) {
          return -1;
        }
        if (slot >>> ID_BITS != tag) {
          continue;
        }
        int v = slot & ID_MASK;
        if (v - 1 >= e.length) {
          // Added after this thread read the entries: read them again (published before the slot).
          e = entries;
          n = names;
        }
        byte[] value = (byte[]) ENTRIES.getAcquire(e, v - 1);
        if (value.length == len && (int) INTS.getAcquire(n, v - 1) == nameId
            && CompactLabels.same(value, 0, b, off, len)) {
          return v - 1;
        }
      }
    }

    /**
     * The UTF-8 bytes of value {@code id} (callers must not modify them). The number was read from
     * a series made after the value was added; a thread that reached that series without a
     * happens-before edge from the addition may in the memory model's strict reading still see no
     * entry for a moment, and waits for it (see {@link LabelNames#bytes}).
     */
    byte[] bytes(int id) {
      byte[][] e = entries;
      byte[] b = id >= 0 && id < e.length ? (byte[]) ENTRIES.getAcquire(e, id) : null;
      for (int spins = 0; b == null; spins++) {
        if (spins == 1_000) {
          synchronized (lock) {
            if (id < 0 || id >= count) {
              throw new IllegalStateException("label value number " + id + " was never handed out");
            }
          }
        }
        Thread.onSpinWait();
        e = entries;
        b = id >= 0 && id < e.length ? (byte[]) ENTRIES.getAcquire(e, id) : null;
      }
      return b;
    }

    int size() {
      synchronized (lock) {
        return count;
      }
    }

    long bytesEstimate() {
      synchronized (lock) {
        return 48L + 4L * slots.length + 4L * entries.length + 4L * names.length + entryBytes;
      }
    }

    /**
     * Eight bytes at a time (a multiply and a shift per word, the last word overlapping or padded),
     * from the name's number, the length and a random start, then a 64-bit finalizer: not the
     * String hash, whose collisions anyone can list. A byte-at-a-time FNV-1a cost a replay of 1 M
     * series about 0.25 s (JFR), as much as the rest of the lookups.
     */
    private int hash(int nameId, byte[] b, int off, int len) {
      long h = seed ^ (nameId + 1L) * 0x9e3779b97f4a7c15L ^ len;
      int end = off + len;
      int i = off;
      for (; i <= end - 8; i += 8) {
        h = (h ^ (long) LONGS.get(b, i)) * 0xbf58476d1ce4e5b9L;
        h ^= h >>> 31;
      }
      if (i < end) {
        long w;
        if (len >= 8) {
          w = (long) LONGS.get(b, end - 8);
        } else {
          w = 0;
          for (int j = end - 1; j >= i; j--) {
            w = w << 8 | (b[j] & 0xff);
          }
        }
        h = (h ^ w) * 0xbf58476d1ce4e5b9L;
        h ^= h >>> 31;
      }
      h ^= h >>> 33;
      h *= 0xff51afd7ed558ccdL;
      h ^= h >>> 33;
      return (int) h;
    }
  }
}
