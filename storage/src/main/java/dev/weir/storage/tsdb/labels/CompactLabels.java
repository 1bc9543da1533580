package dev.weir.storage.tsdb.labels;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The form in which a head series keeps its labels: per label, in the labels' order (sorted by
 * name), its name as a number in the process' dictionary of names ({@link LabelNames}), then its
 * value as a number in the dictionary of values ({@link LabelValues}) or as its bytes:
 *
 * <pre>
 *   varint(id + 1)              a name in the dictionary
 *   0  varint(name length)  name      any other name
 * then
 *   varint(2 * value id + 1)    a value in the dictionary
 *   varint(2 * value length)  value      any other value
 * </pre>
 *
 * <p>A value that many series share (a metric name, a job, a bucket bound) is then one to three
 * bytes per series instead of its text: about 60 bytes per series for the benchmark's label sets.
 *
 * <p>At ten labels that is about 110 bytes less per series than the canonical protobuf encoding
 * ({@link Labels#withWireEncoding}) it replaced: six bytes of framing per label become two, and a
 * name of eight characters becomes one byte. A lookup compares a pushed series' canonical bytes
 * with it label by label ({@link #equalsCanonical}) instead of with one array comparison. Only
 * this class and {@link Cursor} read the form; the WAL and blocks never see it (a series is
 * written there in the canonical form, {@link #toCanonical}), so the dictionary's numbers need
 * not be the same from one process to the next.
 */
public final class CompactLabels {
  private CompactLabels() {}

  /**
   * The compact form of the labels in a canonical encoding. {@code recent}, when given, holds the
   * name numbers of the previous series this caller encoded, by label position, and is updated:
   * series of one source repeat their names in the same places, so most names are found by one
   * comparison instead of a dictionary lookup. The caller must not share it between threads.
   */
  public static byte[] fromCanonical(byte[] canonical, int @Nullable [] recent) {
    Labels.WireCursor c = new Labels.WireCursor(canonical);
    int size = 0;
    // Per label its name's number and its value's, found once: the second pass must write what
    // the first one sized (a dictionary filling up meanwhile must not change an answer).
    int[] ids = new int[32];
    int k = 0;
    for (; c.next(); k++) {
      int id = nameId(canonical, c.nameOff, c.nameLen, recent, k);
      int vid = LabelValues.id(id, canonical, c.valueOff, c.valueLen);
      if (2 * k + 1 >= ids.length) {
        ids = Arrays.copyOf(ids, 2 * ids.length);
      }
      ids[2 * k] = id;
      ids[2 * k + 1] = vid;
      size += (id >= 0 ? varintSize(id + 1) : 1 + varintSize(c.nameLen) + c.nameLen) + valueSize(vid, c.valueLen);
    }
    byte[] out = new byte[size];
    c = new Labels.WireCursor(canonical);
    int p = 0;
    for (k = 0; c.next(); k++) {
      int id = ids[2 * k];
      if (id >= 0) {
        p = varint(out, p, id + 1);
      } else {
        out[p++] = 0;
        p = bytes(out, p, canonical, c.nameOff, c.nameLen);
      }
      p = value(out, p, ids[2 * k + 1], canonical, c.valueOff, c.valueLen);
    }
    return out;
  }

  /**
   * The form {@link #fromCanonical} makes for the labels of {@code compact}, whose values are all in
   * full (a replay's reading thread makes those): each value the value dictionary takes becomes
   * its number. {@code compact} itself when none does.
   */
  public static byte[] withValueNumbers(byte[] compact) {
    Cursor c = new Cursor(compact);
    int[] vids = null;
    int grow = 0;
    for (int k = 0; c.next(); k++) {
      boolean inFull = c.valueArray == compact;
      int vid = c.nameId < 0 || !inFull ? -1 : LabelValues.id(c.nameId, compact, c.valueOff, c.valueLen);
      if (vid < 0) {
        continue;
      }
      if (vids == null) {
        vids = new int[count(compact)];
        Arrays.fill(vids, -1);
      }
      vids[k] = vid;
      grow += valueSize(vid, c.valueLen) - valueSize(-1, c.valueLen);
    }
    if (vids == null) {
      return compact;
    }
    byte[] out = new byte[compact.length + grow];
    c = new Cursor(compact);
    int p = 0;
    for (int k = 0; c.next(); k++) {
      int vid = vids[k];
      if (vid < 0) {
        // The label as it is.
        System.arraycopy(compact, c.labelOff, out, p, c.p - c.labelOff);
        p += c.p - c.labelOff;
        continue;
      }
      // The name part as it is (from the label's start to its value's part), then the number.
      int nameEnd = c.valueOff - varintSize(2 * c.valueLen);
      System.arraycopy(compact, c.labelOff, out, p, nameEnd - c.labelOff);
      p += nameEnd - c.labelOff;
      p = value(out, p, vid, compact, c.valueOff, c.valueLen);
    }
    return out;
  }

  /**
   * Whether two compact forms hold the same labels, label by label (names and values compared as
   * bytes wherever they are kept). Equal arrays always do; this also answers for two forms of the
   * same labels made differently, which one process does not make, as a safeguard for lookups
   * that compare forms.
   */
  public static boolean sameLabels(byte[] a, byte[] b) {
    Cursor x = new Cursor(a);
    Cursor y = new Cursor(b);
    while (x.next()) {
      if (!y.next()) {
        return false;
      }
      if (!y.nameEquals(x.nameArray(), x.nameOffset(), x.nameLength())
          || !y.valueEquals(x.valueArray(), x.valueOffset(), x.valueLength())) {
        return false;
      }
    }
    return !y.next();
  }

  /** Bytes of a value's part: its number ({@code vid} ≥ 0) or its length and bytes. */
  public static int valueSize(int vid, int len) {
    return vid >= 0 ? varintSize(2 * vid + 1) : varintSize(2 * len) + len;
  }

  /** Writes a value's part at {@code p} (see {@link #valueSize}); returns the position after it. */
  public static int value(byte[] out, int p, int vid, byte[] src, int off, int len) {
    if (vid >= 0) {
      return varint(out, p, 2 * vid + 1);
    }
    p = varint(out, p, 2 * len);
    System.arraycopy(src, off, out, p, len);
    return p + len;
  }

  /**
   * The number of the name {@code b[off, off + len)} in {@link LabelNames}, or -1 when it is stored
   * in full; {@code recent} as {@link #fromCanonical}'s, updated at {@code position}.
   */
  public static int nameNumber(byte[] b, int off, int len, int @Nullable [] recent, int position) {
    return nameId(b, off, len, recent, position);
  }

  private static int nameId(byte[] b, int off, int len, int @Nullable [] recent, int position) {
    if (recent != null && position < recent.length) {
      int guess = recent[position] - 1;
      if (guess >= 0) {
        byte[] name = LabelNames.bytes(guess);
        if (name.length == len && Arrays.equals(name, 0, len, b, off, off + len)) {
          return guess;
        }
      }
      int id = LabelNames.id(b, off, len);
      recent[position] = id + 1;
      return id;
    }
    return LabelNames.id(b, off, len);
  }

  private static int bytes(byte[] out, int p, byte[] src, int off, int len) {
    p = varint(out, p, len);
    System.arraycopy(src, off, out, p, len);
    return p + len;
  }

  /** The canonical encoding ({@link Labels#withWireEncoding}) of compact labels. */
  public static byte[] toCanonical(byte[] compact) {
    Cursor c = new Cursor(compact);
    int size = 0;
    while (c.next()) {
      int inner = Labels.wireFieldSize(c.nameLength()) + Labels.wireFieldSize(c.valueLength());
      size += 1 + varintSize(inner) + inner;
    }
    byte[] out = new byte[size];
    c = new Cursor(compact);
    int p = 0;
    while (c.next()) {
      int nameLen = c.nameLength();
      int valueLen = c.valueLength();
      out[p++] = 0x0a;
      p = varint(out, p, Labels.wireFieldSize(nameLen) + Labels.wireFieldSize(valueLen));
      if (nameLen > 0) {
        out[p++] = 0x0a;
        p = varint(out, p, nameLen);
        System.arraycopy(c.nameArray(), c.nameOffset(), out, p, nameLen);
        p += nameLen;
      }
      if (valueLen > 0) {
        out[p++] = 0x12;
        p = varint(out, p, valueLen);
        System.arraycopy(c.valueArray(), c.valueOffset(), out, p, valueLen);
        p += valueLen;
      }
    }
    return out;
  }

  /**
   * The labels, decoded: names are the dictionary's String instances, values new strings.
   * {@code hash} is their {@link Labels#hashCode()}.
   */
  public static Labels decode(byte[] compact, int hash) {
    int n = count(compact);
    String[] pairs = new String[2 * n];
    Cursor c = new Cursor(compact);
    for (int i = 0; c.next(); i += 2) {
      pairs[i] = c.name();
      pairs[i + 1] = c.value();
    }
    return Labels.ofSortedPairs(pairs, hash);
  }

  /** The number of labels. */
  public static int count(byte[] compact) {
    Cursor c = new Cursor(compact);
    int n = 0;
    while (c.next()) {
      n++;
    }
    return n;
  }

  /** The value of the label named {@code name} (UTF-8), or null; only that value becomes a String. */
  public static @Nullable String value(byte[] compact, byte[] name) {
    Cursor c = new Cursor(compact);
    while (c.next()) {
      if (c.nameEquals(name, 0, name.length)) {
        return c.value();
      }
    }
    return null;
  }

  /**
   * Whether {@code canonical[off, end)} is the canonical encoding of these labels. Safe on any
   * bytes (a pushed request's): bytes that are not a canonical encoding, or not of these labels,
   * answer false.
   */
  public static boolean equalsCanonical(byte[] compact, byte[] canonical, int off, int end) {
    int p = 0;
    int q = off;
    int n = compact.length;
    while (p < n) {
      // The Label message: tag, length, then its name field and its value field, each left out
      // when empty. Lengths under 128 are one byte, read inline.
      if (q + 1 >= end || canonical[q] != 0x0a) {
        return false;
      }
      int inner = canonical[q + 1];
      q += 2;
      if (inner < 0) {
        long v = varintAt(canonical, q - 1, end);
        if (v < 0) {
          return false;
        }
        inner = (int) v;
        q = (int) (v >>> 32);
      }
      int innerEnd = q + inner;
      if (innerEnd > end || innerEnd < q) {
        return false;
      }
      long nameField = fieldAt(canonical, q, innerEnd, 0x0a);
      if (nameField < 0) {
        return false;
      }
      int nameOff = (int) (nameField >>> 32);
      int nameLen = (int) nameField;
      q = nameOff + nameLen;
      long valueField = fieldAt(canonical, q, innerEnd, 0x12);
      if (valueField < 0) {
        return false;
      }
      int valueOff = (int) (valueField >>> 32);
      int valueLen = (int) valueField;
      q = valueOff + valueLen;
      if (q != innerEnd) {
        return false; // another field, or a field twice: not a canonical encoding
      }
      // The compact label: name number (or 0 and the name), then the value.
      int id = compact[p++];
      if (id < 0) {
        id = id & 0x7f | compact[p++] << 7; // numbers are at most two bytes (LabelNames.MAX_NAMES)
      }
      if (id != 0) {
        byte[] name = LabelNames.bytes(id - 1);
        if (name.length != nameLen || !same(name, 0, canonical, nameOff, nameLen)) {
          return false;
        }
      } else {
        int len = readVarint(compact, p);
        p += varintSize(len);
        if (len != nameLen || !same(compact, p, canonical, nameOff, len)) {
          return false;
        }
        p += len;
      }
      int v = compact[p];
      if (v < 0) {
        v = readVarint(compact, p);
      }
      p += varintSize(v);
      if ((v & 1) != 0) {
        byte[] value = LabelValues.bytes(v >>> 1);
        if (value.length != valueLen || !same(value, 0, canonical, valueOff, valueLen)) {
          return false;
        }
        continue;
      }
      int len = v >>> 1;
      if (len != valueLen || !same(compact, p, canonical, valueOff, len)) {
        return false;
      }
      p += len;
    }
    return q == end;
  }

  private static final java.lang.invoke.VarHandle LONGS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
  private static final java.lang.invoke.VarHandle INTS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

  /**
   * Whether {@code a[ai, ai + len)} equals {@code b[bi, bi + len)} (both in bounds). Label names
   * and values are short and of every length, so a byte loop's exit, or {@code Arrays.equals}'
   * checks and call, cost more than the comparing: whole words instead, the last one overlapping
   * the one before (no loop for up to 16 bytes).
   */
  static boolean same(byte[] a, int ai, byte[] b, int bi, int len) {
    if (len >= 8) {
      for (int i = 0; i < len - 8; i += 8) {
        if ((long) LONGS.get(a, ai + i) != (long) LONGS.get(b, bi + i)) {
          return false;
        }
      }
      return (long) LONGS.get(a, ai + len - 8) == (long) LONGS.get(b, bi + len - 8);
    }
    if (len >= 4) {
      return (int) INTS.get(a, ai) == (int) INTS.get(b, bi)
          & (int) INTS.get(a, ai + len - 4) == (int) INTS.get(b, bi + len - 4);
    }
    // 0 to 3 bytes: the first, middle and last (the same byte when fewer).
    return len == 0 || a[ai] == b[bi] & a[ai + (len >> 1)] == b[bi + (len >> 1)] & a[ai + len - 1] == b[bi + len - 1];
  }

  /**
   * The string field {@code tag} at {@code q} of a Label message ending at {@code end}: its bytes'
   * offset (high 32 bits) and length (low 32); offset {@code q} and length 0 when the field is left
   * out (empty); -1 when it does not fit. Lengths under 128 are one byte, read inline.
   */
  private static long fieldAt(byte[] b, int q, int end, int tag) {
    if (q >= end || b[q] != tag) {
      return (long) q << 32;
    }
    int off;
    int len;
    if (q + 1 < end && b[q + 1] >= 0) {
      len = b[q + 1];
      off = q + 2;
    } else {
      long v = varintAt(b, q + 1, end);
      if (v < 0) {
        return -1;
      }
      len = (int) v;
      off = (int) (v >>> 32);
    }
    return off + len > end || off + len < off ? -1 : (long) off << 32 | len;
  }

  /**
   * The varint of {@code b} at {@code i}, not reading at or past {@code end}, as its end position
   * (high 32 bits) and value (low 32); -1 when it is cut off, longer than five bytes or negative.
   */
  private static long varintAt(byte[] b, int i, int end) {
    int v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (i >= end) {
        return -1;
      }
      byte x = b[i++];
      if (shift == 28 && (x & 0x78) != 0) {
        return -1; // bits past the 31st: a length no label has (and not to be read as a smaller one)
      }
      v |= (x & 0x7f) << shift;
      if (x >= 0) {
        return (long) i << 32 | v;
      }
    }
    return -1;
  }

  private static int readVarint(byte[] b, int p) {
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      byte x = b[p++];
      v |= (x & 0x7f) << shift;
      if (x >= 0) {
        return v;
      }
    }
  }

  static int varintSize(int v) {
    return Labels.varintSize(v);
  }

  private static int varint(byte[] out, int p, int v) {
    return Labels.varint(out, p, v);
  }

  /**
   * Walks compact labels label by label: after each {@link #next()} that returned true, the name
   * is {@link #name()} (or its bytes, {@link #nameArray()} from {@link #nameOffset()} for
   * {@link #nameLength()} bytes) and the value {@link #value()} (or its bytes, {@link #valueArray()}
   * from {@link #valueOffset()} for {@link #valueLength()}: the compact bytes' or the value
   * dictionary's). Trusts its input: only encodings this class made.
   */
  public static final class Cursor {
    private final byte[] b;
    private int p;
    /** The name's number in {@link LabelNames}, or -1 when the name is stored in full. */
    public int nameId;
    private int nameOff;
    private int nameLen;
    /** Where the current label starts in the compact bytes. */
    private int labelOff;
    private byte @Nullable [] valueArray;
    private int valueOff;
    private int valueLen;

    public Cursor(byte[] compact) {
      this.b = compact;
    }

    public boolean next() {
      if (p >= b.length) {
        return false;
      }
      labelOff = p;
      int id = varint();
      if (id != 0) {
        nameId = id - 1;
      } else {
        nameId = -1;
        nameLen = varint();
        nameOff = p;
        p += nameLen;
      }
      int v = varint();
      if ((v & 1) != 0) {
        valueArray = LabelValues.bytes(v >>> 1);
        valueOff = 0;
        valueLen = valueArray.length;
      } else {
        valueArray = b;
        valueLen = v >>> 1;
        valueOff = p;
        p += valueLen;
      }
      return true;
    }

    public String name() {
      return nameId >= 0 ? LabelNames.string(nameId) : new String(b, nameOff, nameLen, StandardCharsets.UTF_8);
    }

    public String value() {
      return valueLen == 0 ? "" : new String(valueArray(), valueOff, valueLen, StandardCharsets.UTF_8);
    }

    /** The array the value's bytes are in: the dictionary's or the compact labels'. */
    public byte[] valueArray() {
      byte[] a = valueArray;
      if (a == null) {
        throw new IllegalStateException("no label: next() first");
      }
      return a;
    }

    public int valueOffset() {
      return valueOff;
    }

    public int valueLength() {
      return valueLen;
    }

    /** The array the name's bytes are in: the dictionary's or the compact labels'. */
    public byte[] nameArray() {
      return nameId >= 0 ? LabelNames.bytes(nameId) : b;
    }

    public int nameOffset() {
      return nameId >= 0 ? 0 : nameOff;
    }

    public int nameLength() {
      return nameId >= 0 ? LabelNames.bytes(nameId).length : nameLen;
    }

    /** Whether the name is {@code o[off, off + len)}. */
    public boolean nameEquals(byte[] o, int off, int len) {
      int start = nameOffset();
      return nameLength() == len && Arrays.equals(nameArray(), start, start + len, o, off, off + len);
    }

    /** Whether the value is {@code o[off, off + len)}. */
    public boolean valueEquals(byte[] o, int off, int len) {
      return valueLen == len && Arrays.equals(valueArray(), valueOff, valueOff + len, o, off, off + len);
    }

    private int varint() {
      int v = 0;
      for (int shift = 0; ; shift += 7) {
        byte x = b[p++];
        v |= (x & 0x7f) << shift;
        if (x >= 0) {
          return v;
        }
      }
    }
  }
}
