package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * A growing sorted list of series refs for one label pair, stored as the differences between
 * consecutive refs in unsigned LEB128 varints (the first from 0). Refs are handed out in
 * increasing order, so a list's differences are small: one byte per entry for a pair that one
 * series in 128 or more has (a metric name, a cluster, a job), where an {@code int[]} took four
 * plus its growth slack. At a million series of ten labels that was about 45 bytes per series.
 *
 * <p>Single writer, many readers: {@link #add} and {@link #retain} are called only under the
 * index's write lock; readers call {@link #snapshot()} without a lock. An entry's bytes are
 * written before the volatile size is published, and a grown array holds every byte of the old
 * one, so a reader that sees size {@code n} also sees the first {@code n} entries. A difference is
 * never 0 (refs increase), so no entry starts or ends with a 0 byte: a reader racing with
 * {@link #retain} may read the new, shorter content with the older size, and stops at its zero
 * padding or at the array's end ({@link #decode}; the {@code int[]} list this replaced had the
 * same race, without the half-written entry a varint can be).
 */
final class PostingList {
  private static final int MIN_BYTES = 4;
  /** Heap bytes of the object itself: header, two array references and three ints. */
  static final long OBJECT_BYTES = 32;
  /**
   * What an entry costs on average, for estimates that count entries instead of reading lists:
   * one byte in most lists, two or three in sparse ones, plus growth slack.
   */
  static final long ENTRY_BYTES_ESTIMATE = 2;

  /** The label value (UTF-8) whose series this lists, or null for the list of all series. */
  private final byte @Nullable [] value;
  private byte[] bytes = new byte[MIN_BYTES];
  /** Bytes in use (writer only). */
  private int length;
  /** The newest ref (writer only); 0 before the first. */
  private int last;
  private volatile int size;

  /** The list of every series (of no label value). */
  PostingList() {
    this.value = null;
  }

  /** The list of the series with a label value, given as its UTF-8 bytes (kept, not copied). */
  PostingList(byte[] value) {
    this.value = value;
  }

  /** The label value's UTF-8 bytes (callers must not modify them); only for lists of a value. */
  byte[] value() {
    if (value == null) {
      throw new IllegalStateException("the list of all series has no value");
    }
    return value;
  }

  /**
   * Adds {@code ref}, which should be larger than every ref in the list (then it costs a varint);
   * a smaller or equal one is merged in order by rewriting the list. Returns how many bytes the
   * list's array grew by, for the index's memory estimate.
   */
  int add(int ref) {
    if (ref <= 0) {
      throw new IllegalArgumentException("series refs are positive: " + ref);
    }
    if (ref <= last) {
      return insert(ref);
    }
    int before = bytes.length;
    int p = length;
    byte[] a = bytes;
    int delta = ref - last;
    int end = p + Labels.varintSize(delta);
    if (end > a.length) {
      a = Arrays.copyOf(a, Math.max(end, a.length < 64 ? a.length * 2 : a.length + (a.length >> 1)));
      bytes = a;
    }
    length = Labels.varint(a, p, delta);
    last = ref;
    size = size + 1; // volatile: publishes the entry (and a grown array) to readers
    return bytes.length - before;
  }

  int size() {
    return size;
  }

  /** Heap bytes of the list's array (its capacity, with its 16-byte header). */
  long arrayBytes() {
    return 16L + bytes.length;
  }

  /** The refs published so far, in increasing order (a copy the caller may keep). */
  int[] snapshot() {
    int n = size;
    return decode(bytes, n);
  }

  /**
   * At most {@code n} refs from the varints of {@code a}. A 0 byte ends the list wherever it is: an
   * entry never starts with one (a difference is at least 1) and never ends with one (a varint's
   * last byte is 0 only for the value 0), so it is the padding of an array {@link #retain} made
   * shorter while the caller still held the older size. An entry the writer is appending there
   * meanwhile may be half written (its first byte, not yet its last): the 0 after it, or the
   * array's end, drops it instead of reading it as a smaller ref that was never added.
   */
  static int[] decode(byte[] a, int n) {
    int[] out = new int[n];
    int ref = 0;
    int p = 0;
    int i = 0;
    entries:
    while (i < n && p < a.length) {
      int b = a[p++];
      int delta = b & 0x7f;
      for (int shift = 7; b < 0; shift += 7) {
        if (p == a.length) {
          break entries;
        }
        b = a[p++];
        if (b == 0) {
          break entries;
        }
        delta |= (b & 0x7f) << shift;
      }
      if (delta == 0) {
        break;
      }
      ref += delta;
      out[i++] = ref;
    }
    return i == n ? out : Arrays.copyOf(out, i);
  }

  /**
   * Keeps the refs {@code keep} accepts (used when series are removed); the caller holds the write
   * lock. Returns how many bytes the list's array changed by (negative when it shrank).
   */
  int retain(java.util.function.IntPredicate keep) {
    int[] refs = snapshot();
    int m = 0;
    for (int r : refs) {
      if (keep.test(r)) {
        refs[m++] = r;
      }
    }
    return rewrite(refs, m);
  }

  /** Merges a ref that is not larger than the newest: rewrites the list (rare; see {@link #add}). */
  private int insert(int ref) {
    int[] refs = snapshot();
    int at = Arrays.binarySearch(refs, ref);
    if (at >= 0) {
      return 0; // already present
    }
    at = -at - 1;
    int[] merged = new int[refs.length + 1];
    System.arraycopy(refs, 0, merged, 0, at);
    merged[at] = ref;
    System.arraycopy(refs, at, merged, at + 1, refs.length - at);
    return rewrite(merged, merged.length);
  }

  /**
   * Replaces the content with {@code refs[0, n)} (sorted, unique, positive). A reader that still
   * holds the older size reads the new array up to its end or its zero padding, whichever first.
   */
  private int rewrite(int[] refs, int n) {
    int before = bytes.length;
    int need = 0;
    int prev = 0;
    for (int i = 0; i < n; i++) {
      need += Labels.varintSize(refs[i] - prev);
      prev = refs[i];
    }
    byte[] out = new byte[Math.max(MIN_BYTES, need + 5)];
    int p = 0;
    prev = 0;
    for (int i = 0; i < n; i++) {
      p = Labels.varint(out, p, refs[i] - prev);
      prev = refs[i];
    }
    bytes = out;
    length = p;
    last = prev;
    size = n; // volatile: publishes the new array
    return bytes.length - before;
  }
}
