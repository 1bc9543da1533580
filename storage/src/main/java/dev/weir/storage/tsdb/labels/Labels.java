package dev.weir.storage.tsdb.labels;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * An immutable label set sorted by name, the identity of a series. Names are unique.
 *
 * <p>Stored as one interleaved array {@code [name0, value0, name1, value1, ...]}, optionally with
 * the canonical protobuf encoding ({@link #withWireEncoding}), which is all a head series keeps of
 * its labels ({@link #fromWireEncoding} makes them again). Equality and ordering follow Prometheus: label by label,
 * name first, then value, a prefix sorts first, strings in UTF-8 byte order ({@link Utf8Order}).
 *
 * <p>Thread-safe (immutable).
 */
public final class Labels implements Comparable<Labels>, SeriesKey {
  public static final String METRIC_NAME = "__name__";
  public static final Labels EMPTY = new Labels(new String[0]);

  private final String[] pairs;
  private final int hash;
  /** The labels as remote write encodes them (see {@link #withWireEncoding}), or null. */
  private final byte @Nullable [] wire;

  private Labels(String[] pairs) {
    this(pairs, null);
  }

  private Labels(String[] pairs, byte @Nullable [] wire) {
    this(pairs, Arrays.hashCode(pairs), wire);
  }

  /** With {@code hash} already known: {@code Arrays.hashCode(pairs)}. */
  private Labels(String[] pairs, int hash, byte @Nullable [] wire) {
    this.pairs = pairs;
    this.hash = hash;
    this.wire = wire;
  }

  /**
   * The same labels carrying their canonical protobuf encoding as the {@code labels} entries of a
   * {@code prometheus.TimeSeries} (field 1, each a {@code Label} with name then value; empty
   * strings omitted, as protobuf omits proto3 defaults): what a pushed series' labels are compared
   * with, without a String per label, and what a head series is written to the WAL as (the head
   * keeps the smaller {@link CompactLabels} form).
   */
  public static Labels withWireEncoding(Labels l) {
    String[] pairs = l.pairs;
    // Byte length of each string; a string with a character past ASCII is encoded apart.
    int[] lens = new int[pairs.length];
    byte @Nullable [][] utf8 = null;
    int total = 0;
    for (int i = 0; i < pairs.length; i++) {
      String s = pairs[i];
      if (isAscii(s)) {
        lens[i] = s.length();
      } else {
        if (utf8 == null) {
          utf8 = new byte[pairs.length][];
        }
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        utf8[i] = b;
        lens[i] = b.length;
      }
      if ((i & 1) == 1) {
        int inner = field(lens[i - 1]) + field(lens[i]);
        total += 1 + varintSize(inner) + inner;
      }
    }
    byte[] out = new byte[total];
    int p = 0;
    for (int i = 0; i < pairs.length; i += 2) {
      out[p++] = 0x0a;
      p = varint(out, p, field(lens[i]) + field(lens[i + 1]));
      p = put(out, p, 0x0a, pairs[i], lens[i], utf8 == null ? null : utf8[i]);
      p = put(out, p, 0x12, pairs[i + 1], lens[i + 1], utf8 == null ? null : utf8[i + 1]);
    }
    return new Labels(pairs, l.hash, out);
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /** Writes a string field: its tag, length and bytes ({@code utf8}, or the ASCII characters). */
  private static int put(byte[] out, int p, int tag, String s, int len, byte @Nullable [] utf8) {
    if (len == 0) {
      return p;
    }
    out[p++] = (byte) tag;
    p = varint(out, p, len);
    if (utf8 != null) {
      System.arraycopy(utf8, 0, out, p, len);
    } else {
      asciiBytes(s, out, p);
    }
    return p + len;
  }

  /**
   * Copies an ASCII string's characters into {@code out} at {@code p}: String's low-byte copy,
   * exact for ASCII and an array copy for a Latin-1 string, without the array of its own that
   * {@code getBytes(UTF_8)} returns.
   */
  @SuppressWarnings("deprecation")
  private static void asciiBytes(String s, byte[] out, int p) {
    s.getBytes(0, s.length(), out, p);
  }

  /**
   * Bytes a string field of {@code len} bytes takes in the canonical encoding: tag, length and
   * bytes, or nothing when empty (for encoders of it outside this class).
   */
  public static int wireFieldSize(int len) {
    return field(len);
  }

  private static int field(int len) {
    return len == 0 ? 0 : 1 + varintSize(len) + len;
  }

  /** Bytes of {@code v} as a protobuf varint. */
  public static int varintSize(int v) {
    int n = 1;
    while ((v & ~0x7f) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  /** Writes {@code v} as a protobuf varint into {@code out} at {@code p}; returns the position after it. */
  public static int varint(byte[] out, int p, int v) {
    while ((v & ~0x7f) != 0) {
      out[p++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out[p++] = (byte) v;
    return p;
  }

  /** The encoding made by {@link #withWireEncoding}, or null; callers must not modify it. */
  public byte @Nullable [] wireEncoding() {
    return wire;
  }

  /** These labels with their canonical encoding: this object when it has one. */
  public Labels encoded() {
    return wire != null ? this : withWireEncoding(this);
  }

  /**
   * Labels decoded from a canonical encoding ({@link #withWireEncoding}), which they keep; new
   * strings, not interned. {@code hash} is the labels' {@link #hashCode()}, known to the caller
   * (a head series stores it beside its encoding).
   */
  public static Labels fromWireEncoding(byte[] wire, int hash) {
    WireCursor c = new WireCursor(wire);
    int n = 0;
    while (c.next()) {
      n++;
    }
    String[] pairs = new String[2 * n];
    c = new WireCursor(wire);
    for (int i = 0; c.next(); i += 2) {
      pairs[i] = c.name();
      pairs[i + 1] = c.value();
    }
    return new Labels(pairs, hash, wire);
  }

  /** {@inheritDoc} By comparison with this label set's own canonical encoding. */
  @Override
  public boolean matches(byte[] compact) {
    byte[] w = wire != null ? wire : withWireEncoding(this).wire;
    return CompactLabels.equalsCanonical(compact, w, 0, w.length);
  }

  /**
   * Walks a canonical encoding ({@link #withWireEncoding}) label by label: after each
   * {@link #next()} that returned true, the name and value are the byte ranges
   * {@code [nameOff, nameOff + nameLen)} and {@code [valueOff, valueOff + valueLen)} (an omitted
   * empty string has length 0). Trusts its input: only encodings this class made.
   */
  public static final class WireCursor {
    private final byte[] b;
    private int p;
    public int nameOff;
    public int nameLen;
    public int valueOff;
    public int valueLen;

    public WireCursor(byte[] canonical) {
      this.b = canonical;
    }

    public boolean next() {
      if (p >= b.length) {
        return false;
      }
      p++; // tag of a Label: field 1, length-delimited
      int inner = varint();
      int end = p + inner;
      nameLen = 0;
      valueLen = 0;
      if (p < end && b[p] == 0x0a) {
        p++;
        nameLen = varint();
        nameOff = p;
        p += nameLen;
      } else {
        nameOff = p;
      }
      if (p < end && b[p] == 0x12) {
        p++;
        valueLen = varint();
        valueOff = p;
        p += valueLen;
      } else {
        valueOff = p;
      }
      p = end;
      return true;
    }

    public String name() {
      return string(nameOff, nameLen);
    }

    public String value() {
      return string(valueOff, valueLen);
    }

    private String string(int off, int len) {
      return len == 0 ? "" : new String(b, off, len, java.nio.charset.StandardCharsets.UTF_8);
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

  /**
   * Builds labels from an interleaved array that is already sorted by name with unique names. The
   * array is taken over, not copied.
   */
  public static Labels ofSortedPairs(String[] pairs) {
    if ((pairs.length & 1) != 0) {
      throw new IllegalArgumentException("odd number of strings: " + pairs.length);
    }
    return new Labels(pairs);
  }

  /**
   * {@link #ofSortedPairs(String[])} with the labels' {@link #hashCode()} already known (a head
   * series keeps it beside its labels), which is not computed again.
   */
  static Labels ofSortedPairs(String[] pairs, int hash) {
    return new Labels(pairs, hash, null);
  }

  /**
   * Builds labels from name/value pairs in any order; sorts them.
   *
   * @throws IllegalArgumentException on a duplicate name
   */
  public static Labels of(String... pairs) {
    if ((pairs.length & 1) != 0) {
      throw new IllegalArgumentException("odd number of strings: " + pairs.length);
    }
    String[] copy = pairs.clone();
    sortPairs(copy);
    for (int i = 2; i < copy.length; i += 2) {
      if (copy[i].equals(copy[i - 2])) {
        throw new IllegalArgumentException("duplicate label name " + copy[i]);
      }
    }
    return new Labels(copy);
  }

  /** Builds labels from a map; empty values are kept. */
  public static Labels fromMap(Map<String, String> map) {
    String[] pairs = new String[map.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : map.entrySet()) {
      pairs[i++] = e.getKey();
      pairs[i++] = e.getValue();
    }
    sortPairs(pairs);
    return new Labels(pairs);
  }

  /**
   * Sorts an interleaved name/value array by name in place, stably (pairs of equal names keep
   * their order): one pass when already sorted (what Prometheus sends), insertion sort for small
   * label sets, a merge sort of the pair indexes for large ones.
   *
   * @return true when the array was already sorted
   */
  public static boolean sortPairs(String[] pairs) {
    boolean sorted = true;
    for (int i = 2; i < pairs.length; i += 2) {
      if (Utf8Order.compare(pairs[i - 2], pairs[i]) > 0) {
        sorted = false;
        break;
      }
    }
    if (sorted) {
      return true;
    }
    int n = pairs.length / 2;
    if (n <= INSERTION_SORT_MAX) {
      for (int i = 2; i < pairs.length; i += 2) {
        String name = pairs[i];
        String value = pairs[i + 1];
        int j = i - 2;
        while (j >= 0 && Utf8Order.compare(pairs[j], name) > 0) {
          pairs[j + 2] = pairs[j];
          pairs[j + 3] = pairs[j + 1];
          j -= 2;
        }
        pairs[j + 2] = name;
        pairs[j + 3] = value;
      }
      return false;
    }
    // Many labels (a hostile series can send millions before any limit applies): a stable
    // O(n log n) sort of the pair indexes instead of the insertion sort's O(n²).
    Integer[] order = new Integer[n];
    for (int k = 0; k < n; k++) {
      order[k] = k;
    }
    String[] copy = pairs.clone();
    Arrays.sort(order, (a, b) -> Utf8Order.compare(copy[2 * a], copy[2 * b]));
    for (int k = 0; k < n; k++) {
      pairs[2 * k] = copy[2 * order[k]];
      pairs[2 * k + 1] = copy[2 * order[k] + 1];
    }
    return false;
  }

  /** Up to this many pairs, {@link #sortPairs} sorts in place by insertion (typical series). */
  static final int INSERTION_SORT_MAX = 32;

  public int size() {
    return pairs.length / 2;
  }

  public String name(int i) {
    return pairs[2 * i];
  }

  public String value(int i) {
    return pairs[2 * i + 1];
  }

  /** Returns the value of a label, or null when the series has no such label. */
  public @Nullable String get(String name) {
    for (int i = 0; i < pairs.length; i += 2) {
      int c = Utf8Order.compare(pairs[i], name);
      if (c == 0) {
        return pairs[i + 1];
      }
      if (c > 0) {
        return null;
      }
    }
    return null;
  }

  /** Returns the value of a label, or "" when the series has no such label (Prometheus rule). */
  public String getOrEmpty(String name) {
    String v = get(name);
    return v == null ? "" : v;
  }

  public void forEach(BiConsumer<String, String> consumer) {
    for (int i = 0; i < pairs.length; i += 2) {
      consumer.accept(pairs[i], pairs[i + 1]);
    }
  }

  public List<String> names() {
    List<String> names = new ArrayList<>(size());
    for (int i = 0; i < pairs.length; i += 2) {
      names.add(pairs[i]);
    }
    return names;
  }

  /** The interleaved array; callers must not modify it. */
  public String[] pairsUnsafe() {
    return pairs;
  }

  /** Approximate bytes retained by the label strings (not counting sharing through interning). */
  public long stringBytes() {
    long n = 0;
    for (String s : pairs) {
      n += s.length();
    }
    return n;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return this == o || (o instanceof Labels other && hash == other.hash && Arrays.equals(pairs, other.pairs));
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public int compareTo(Labels o) {
    int n = Math.min(pairs.length, o.pairs.length);
    for (int i = 0; i < n; i++) {
      int c = Utf8Order.compare(pairs[i], o.pairs[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(pairs.length, o.pairs.length);
  }

  /** Prometheus text form: {@code name{a="b", c="d"}}, or {@code {a="b"}} without a name. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    String metric = get(METRIC_NAME);
    if (metric != null) {
      sb.append(metric);
    }
    sb.append('{');
    boolean first = true;
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i].equals(METRIC_NAME)) {
        continue;
      }
      if (!first) {
        sb.append(", ");
      }
      first = false;
      sb.append(pairs[i]).append("=\"");
      appendEscaped(sb, pairs[i + 1]);
      sb.append('"');
    }
    return sb.append('}').toString();
  }

  private static void appendEscaped(StringBuilder sb, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> sb.append("\\\\");
        case '"' -> sb.append("\\\"");
        case '\n' -> sb.append("\\n");
        default -> sb.append(c);
      }
    }
  }
}
