package dev.weir.storage.tsdb.labels;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The process' dictionary of label names, so that a head series stores a name as a number of one
 * or two bytes ({@link CompactLabels}) instead of its text. Names are few (a fleet's label names
 * number in the hundreds), and the same in every tenant, so the table is one per process and
 * never forgets a name. It is bounded: at most {@link #MAX_NAMES} names of at most
 * {@link #MAX_NAME_BYTES} bytes each, about 2.3 MiB when full and 256 KiB of tables from the start.
 * A name that does not fit (the table is full, or the name is longer) is stored in full in each
 * series that has it: a tenant that invents names costs memory, never correctness.
 *
 * <p>Thread-safe: lookups are lock-free (an entry's bytes and string are published with release
 * stores before its table slot, and read with acquire loads), additions take a lock.
 */
public final class LabelNames {
  /** Names the dictionary holds at most; a number up to it is a varint of at most two bytes. */
  public static final int MAX_NAMES = 16_383;
  /** Longer names are never added: they stay in full in their series. */
  public static final int MAX_NAME_BYTES = 128;

  private static final VarHandle BYTES = MethodHandles.arrayElementVarHandle(byte[][].class);
  private static final VarHandle STRINGS = MethodHandles.arrayElementVarHandle(String[].class);
  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(int[].class);

  private static final byte[][] bytes = new byte[MAX_NAMES][];
  private static final String[] strings = new String[MAX_NAMES];
  /** Open addressing by {@link #hash}: number + 1 of the name, or 0 for an empty slot. */
  private static final int[] slots = new int[2 * (MAX_NAMES + 1)];
  private static final Object lock = new Object();
  private static int count;
  /** Set once {@link #count} reached {@link #MAX_NAMES}: new names then skip the lock. */
  private static volatile boolean full;
  /**
   * The hash's starting value, random per process: the names are a tenant's input, and one table
   * serves every tenant, so their places in it must not be something a tenant can line up.
   */
  private static final long SEED = new java.security.SecureRandom().nextLong() | 1;

  private LabelNames() {}

  /**
   * The number of the name {@code b[off, off + len)}, added if new and there is room, or -1 when it
   * is not in the dictionary and cannot be (too long, or the dictionary is full).
   */
  public static int id(byte[] b, int off, int len) {
    if (len > MAX_NAME_BYTES) {
      return -1;
    }
    int h = hash(b, off, len);
    int found = find(b, off, len, h);
    if (found >= 0) {
      return found;
    }
    if (full) {
      // Full since the miss: the name may have been the last one added, by another thread (its
      // slot is published before full is set). Look again, so that a name has one answer.
      return find(b, off, len, h);
    }
    synchronized (lock) {
      found = find(b, off, len, h);
      if (found >= 0 || count == MAX_NAMES) {
        return found;
      }
      int id = count++;
      byte[] name = Arrays.copyOfRange(b, off, off + len);
      BYTES.setRelease(bytes, id, name);
      STRINGS.setRelease(strings, id, new String(name, StandardCharsets.UTF_8));
      int mask = slots.length - 1;
      int i = h & mask;
      while ((int) SLOTS.getAcquire(slots, i) != 0) {
        i = (i + 1) & mask;
      }
      SLOTS.setRelease(slots, i, id + 1);
      full = count == MAX_NAMES; // after the slot: a thread that sees full finds every name
      return id;
    }
  }

  /** The number of a name already in the dictionary, or -1. */
  private static int find(byte[] b, int off, int len, int h) {
    int mask = slots.length - 1;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int v = (int) SLOTS.getAcquire(slots, i);
      if (v == 0) {
        return -1;
      }
      byte[] name = (byte[]) BYTES.getAcquire(bytes, v - 1);
      if (name.length == len && Arrays.equals(name, 0, len, b, off, off + len)) {
        return v - 1;
      }
    }
  }

  /**
   * The UTF-8 bytes of name {@code id} (callers must not modify them). The number was read from a
   * series made after the name was added, so the entry exists; a thread that reached that series
   * without a happens-before edge from the addition (a lock-free lookup's plain read of the
   * series table) may in the memory model's strict reading still see no entry for a moment, and
   * waits for it (briefly: a number never handed out fails) instead of failing.
   */
  public static byte[] bytes(int id) {
    byte[] b = (byte[]) BYTES.getAcquire(bytes, id);
    for (int spins = 0; b == null; spins++) {
      awaitEntry(id, spins);
      b = (byte[]) BYTES.getAcquire(bytes, id);
    }
    return b;
  }

  /** Name {@code id} as a String: the same instance every time (see {@link #bytes} on visibility). */
  public static String string(int id) {
    String s = (String) STRINGS.getAcquire(strings, id);
    for (int spins = 0; s == null; spins++) {
      awaitEntry(id, spins);
      s = (String) STRINGS.getAcquire(strings, id);
    }
    return s;
  }

  private static void awaitEntry(int id, int spins) {
    if (spins == 1_000) {
      synchronized (lock) { // the addition's lock: after it, the entry is visible or was never made
        if (id >= count) {
          throw new IllegalStateException("label name number " + id + " was never handed out");
        }
      }
    }
    Thread.onSpinWait();
  }

  /** Names in the dictionary now (for the memory a process reports). */
  public static int size() {
    synchronized (lock) {
      return count;
    }
  }

  /**
   * FNV-1a over the bytes from a per-process random start, then a 64-bit finalizer: not the
   * String hash, whose collisions anyone can list ("Aa" and "BB"), which would let one tenant pile
   * names into one long probe run that every tenant's new names then walk.
   */
  private static int hash(byte[] b, int off, int len) {
    long h = SEED;
    for (int i = off; i < off + len; i++) {
      h = (h ^ (b[i] & 0xff)) * 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return (int) h;
  }

  /** For tests: whether {@code name} is in the dictionary, without adding it. */
  static boolean contains(@Nullable String name) {
    if (name == null) {
      return false;
    }
    byte[] b = name.getBytes(StandardCharsets.UTF_8);
    return b.length <= MAX_NAME_BYTES && find(b, 0, b.length, hash(b, 0, b.length)) >= 0;
  }
}
