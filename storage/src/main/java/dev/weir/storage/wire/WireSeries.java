package dev.weir.storage.wire;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.SeriesKey;
import dev.weir.storage.util.AsciiHash;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * A cursor over one {@code prometheus.TimeSeries} in its protobuf bytes: label positions, samples
 * decoded into primitive arrays, histograms counted. Nothing is allocated per series once the
 * arrays have grown to the largest series seen.
 *
 * <p>When every label is ASCII and the names arrive sorted and unique (what Prometheus sends),
 * {@link #key()} is a {@link SeriesKey} with the hash of the {@link Labels} of the same content,
 * matched against a head series' labels ({@link CompactLabels}) byte by byte, so the head finds the existing series
 * without building a String. Otherwise {@link #hasKey()} is false and the caller builds the labels with
 * {@link #pairs()}. Usage:
 *
 * <pre>{@code
 * WireSeries ws = new WireSeries();
 * ws.reset(buf, off, len);
 * MemSeries s = ws.hasKey() ? seriesByLabels.get(ws.key()) : null;
 * for (int i = 0; i < ws.samples(); i++) { ... ws.timestamp(i), ws.value(i) ... }
 * }</pre>
 *
 * <p>Not thread-safe; one per thread, reused.
 */
public final class WireSeries {
  private static final int TIME_SERIES_LABELS = 1;
  private static final int TIME_SERIES_SAMPLES = 2;
  private static final int TIME_SERIES_EXEMPLARS = 3;
  private static final int TIME_SERIES_HISTOGRAMS = 4;

  private final ProtoReader r = new ProtoReader();
  private final ProtoReader sub = new ProtoReader();
  private final Key key = new Key();
  private byte[] buf = new byte[0];
  /** Per label: name offset, name length, value offset, value length. */
  private int[] labelPos = new int[4 * 16];
  private int labels;
  private long[] ts = new long[16];
  private double[] vs = new double[16];
  private int samples;
  private int histograms;
  private boolean ascii;
  private boolean sortedUnique;
  /** The labels' {@link Labels#hashCode()}, once {@link #hashed}. */
  private int hash;
  /** Whether {@link #hash} is computed. */
  private boolean hashed;
  /** Whether reading the labels computes {@link #hash}; else it is computed when first asked for. */
  private final boolean hashOnRead;

  /** A cursor that computes the labels' hash as it reads them (for lookups in the head). */
  public WireSeries() {
    this(true);
  }

  /**
   * @param hashOnRead false for readers that do not look series up by {@link #key()} (the
   *     distributor): the hash is then computed only if {@link #labelsHash()} or the key is used
   */
  public WireSeries(boolean hashOnRead) {
    this.hashOnRead = hashOnRead;
  }
  private int maxNameLength;
  private int maxValueLength;
  private boolean emptyValue;
  /** Where the labels' bytes start and end, when they are one run of field-1 entries. */
  private int labelsStart;
  private int labelsEnd;
  private boolean labelsContiguous;
  /** False after {@link #resetKnownLabels}: label positions must be read before they are used. */
  private boolean labelsRead;
  private int seriesOff;
  private int seriesLen;
  /** The request's symbols for a remote write 2.0 series ({@link #resetV2}); null for 1.0. */
  private @Nullable Symbols symbols;
  private int[] refs = new int[32];
  private int refCount;
  private int exemplars;
  /** Per exemplar: offset and length of its message. */
  private int[] exemplarPos = new int[8];
  private long createdTimestamp;
  /** Symbol index of the {@code __name__} value, -1 when there is none (2.0 only). */
  private int nameRef;
  private boolean hasMetadata;
  private int metadataType;
  private int helpRef;
  private int unitRef;
  private @Nullable HistogramCheck histogramCheck;
  private @Nullable HistogramDecoder histogramDecoder;
  /** Per histogram: offset and length of its Histogram message. */
  private int[] histogramPos = new int[8];

  /** Ints {@link #saveLabels} writes per series. */
  public static final int SAVED_INTS = 6;

  /**
   * Reads the series in {@code b[off, off+len)}.
   *
   * @throws WireFormatException when the bytes are not a well-formed TimeSeries
   */
  public WireSeries reset(byte[] b, int off, int len) {
    clear(b, off, len, null);
    r.reset(b, off, len);
    while (r.more()) {
      int fieldStart = r.pos;
      int tag = r.tag();
      int field = tag >>> 3;
      int wt = tag & 7;
      if (wt == ProtoReader.LEN && field == TIME_SERIES_LABELS) {
        int s = r.lengthDelimited();
        label(s, r.pos - s);
        if (labelsStart < 0) {
          labelsStart = fieldStart;
        } else if (labelsEnd != fieldStart) {
          labelsContiguous = false;
        }
        labelsEnd = r.pos;
      } else if (wt == ProtoReader.LEN && field == TIME_SERIES_SAMPLES) {
        int s = r.lengthDelimited();
        sample(s, r.pos - s);
      } else if (wt == ProtoReader.LEN && field == TIME_SERIES_HISTOGRAMS) {
        int s = r.lengthDelimited();
        histogram(s, r.pos - s);
      } else if (wt == ProtoReader.LEN && field == TIME_SERIES_EXEMPLARS) {
        int s = r.lengthDelimited();
        addExemplar(s, r.pos - s);
      } else {
        r.skip(wt); // unknown fields
      }
    }
    return this;
  }

  private void addExemplar(int off, int len) {
    if (2 * exemplars + 2 > exemplarPos.length) {
      exemplarPos = Arrays.copyOf(exemplarPos, exemplarPos.length * 2);
    }
    exemplarPos[2 * exemplars] = off;
    exemplarPos[2 * exemplars + 1] = len;
    exemplars++;
  }

  private static final byte[] NO_BYTES = new byte[0];

  /**
   * Forgets the series it read, and with it the request's bytes and symbols: a thread that keeps
   * this cursor between requests then keeps none of their buffers alive.
   */
  public void release() {
    clear(NO_BYTES, 0, 0, null);
    r.reset(NO_BYTES, 0, 0);
    sub.reset(NO_BYTES, 0, 0);
  }

  private void clear(byte[] b, int off, int len, @Nullable Symbols syms) {
    buf = b;
    seriesOff = off;
    seriesLen = len;
    symbols = syms;
    labelsRead = true;
    labels = 0;
    samples = 0;
    histograms = 0;
    exemplars = 0;
    createdTimestamp = 0;
    nameRef = -1;
    hasMetadata = false;
    metadataType = 0;
    helpRef = 0;
    unitRef = 0;
    ascii = true;
    sortedUnique = true;
    hash = 1;
    hashed = hashOnRead; // complete once the labels are read
    maxNameLength = 0;
    maxValueLength = 0;
    emptyValue = false;
    labelsStart = -1;
    labelsEnd = -1;
    labelsContiguous = true;
  }

  /**
   * Reads a remote write 2.0 {@code io.prometheus.write.v2.TimeSeries} in {@code b[off, off+len)},
   * whose label references point into {@code syms} (the same request's symbols, in the same
   * buffer): the label positions are those of the symbols' bytes, so a known series is found by
   * {@link #key()} without a String, as for 1.0. Histograms are checked ({@link HistogramCheck}),
   * exemplars counted, metadata and the created timestamp kept.
   *
   * @throws WireFormatException when the bytes are not a well-formed TimeSeries
   * @throws InvalidSeriesException when a reference is out of range, {@code labels_refs} has an
   *     odd length, or a histogram is inconsistent
   */
  WireSeries resetV2(byte[] b, int off, int len, Symbols syms) {
    clear(b, off, len, syms);
    labelsContiguous = false; // no 1.0 label bytes to compare with a Labels' wire encoding
    refCount = 0;
    @Nullable InvalidSeriesException histogramProblem = null;
    long badRef = -1;
    r.reset(b, off, len);
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      int wt = tag & 7;
      if (field == 1 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        sub.reset(b, s, r.pos - s);
        while (sub.more()) {
          addRef(sub.varint());
        }
      } else if (field == 1 && wt == ProtoReader.VARINT) {
        addRef(r.varint());
      } else if (field == 2 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        sample(s, r.pos - s);
      } else if (field == 3 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        histogram(s, r.pos - s);
        if (histogramProblem == null) {
          HistogramCheck c = histogramCheck == null ? histogramCheck = new HistogramCheck() : histogramCheck;
          histogramProblem = c.problem(b, s, r.pos - s);
        }
      } else if (field == 4 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        addExemplar(s, r.pos - s);
        long bad = exemplarBadRef(s, r.pos - s, syms);
        badRef = badRef < 0 ? bad : badRef;
      } else if (field == 5 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        long bad = metadata(s, r.pos - s, syms);
        badRef = badRef < 0 ? bad : badRef;
      } else if (field == 6 && wt == ProtoReader.VARINT) {
        createdTimestamp = r.varint();
      } else {
        r.skip(wt);
      }
    }
    if (refCount % 2 != 0) {
      throw new InvalidSeriesException("invalid_labels_refs", "labels_refs has an odd length (" + refCount
          + "): it must hold name and value pairs, series: " + describeV2());
    }
    for (int i = 0; i < refCount; i++) {
      if (!syms.has(refs[i] & 0xffffffffL)) {
        badRef = refs[i] & 0xffffffffL;
        break;
      }
    }
    if (badRef >= 0) {
      throw new InvalidSeriesException("invalid_symbol_reference", "symbol reference " + badRef + " is out of"
          + " range: the request has " + syms.size() + " symbols, series: " + describeV2());
    }
    for (int i = 0; i < refCount; i += 2) {
      int n = refs[i];
      int v = refs[i + 1];
      addLabel(syms.off(n), syms.len(n), syms.off(v), syms.len(v));
      if (nameRef < 0 && isMetricName(syms.off(n), syms.len(n))) {
        nameRef = v;
      }
    }
    if (histogramProblem != null) {
      throw new InvalidSeriesException(histogramProblem.reason(), histogramProblem.getMessage() + ", series: "
          + describeV2());
    }
    return this;
  }

  private static final byte[] METRIC_NAME = "__name__".getBytes(StandardCharsets.US_ASCII);

  private boolean isMetricName(int off, int len) {
    return Arrays.equals(buf, off, off + len, METRIC_NAME, 0, METRIC_NAME.length);
  }

  private void addRef(long ref) {
    if (refCount == refs.length) {
      refs = Arrays.copyOf(refs, refCount * 2);
    }
    // Out of range (also beyond 32 bits) is reported once the whole series is read.
    refs[refCount++] = ref >>> 32 != 0 ? -1 : (int) ref;
  }

  /** The first out-of-range label reference of an exemplar, or -1. */
  private long exemplarBadRef(int off, int len, Symbols syms) {
    sub.reset(buf, off, len);
    long bad = -1;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      if ((tag >>> 3) == 1 && wt == ProtoReader.LEN) {
        int s = sub.lengthDelimited();
        int end = sub.pos;
        sub.pos = s;
        while (sub.pos < end) {
          long ref = sub.varint();
          bad = bad < 0 && !syms.has(ref) ? ref : bad;
        }
      } else if ((tag >>> 3) == 1 && wt == ProtoReader.VARINT) {
        long ref = sub.varint();
        bad = bad < 0 && !syms.has(ref) ? ref : bad;
      } else {
        sub.skip(wt);
      }
    }
    return bad;
  }

  /** Reads a Metadata message; returns its first out-of-range reference, or -1. */
  private long metadata(int off, int len, Symbols syms) {
    sub.reset(buf, off, len);
    hasMetadata = true;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      int f = tag >>> 3;
      if (f == 1 && wt == ProtoReader.VARINT) {
        metadataType = (int) sub.varint();
      } else if ((f == 3 || f == 4) && wt == ProtoReader.VARINT) {
        long ref = sub.varint();
        if (!syms.has(ref)) {
          return ref;
        }
        if (f == 3) {
          helpRef = (int) ref;
        } else {
          unitRef = (int) ref;
        }
      } else {
        sub.skip(wt);
      }
    }
    return -1;
  }

  /** The series' labels as far as the references resolve, for error messages. */
  private String describeV2() {
    Symbols syms = symbols;
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < refCount; i++) {
      if (i % 2 == 1) {
        sb.append('=');
      } else if (i > 0) {
        sb.append(", ");
      }
      long ref = refs[i] & 0xffffffffL;
      if (syms != null && refs[i] != -1 && syms.has(ref)) {
        String v = syms.string(refs[i]);
        sb.append(i % 2 == 1 ? "\"" + v + "\"" : v);
      } else {
        sb.append("<ref ").append(refs[i] == -1 ? "beyond 2^32" : Long.toString(ref)).append(" out of range>");
      }
    }
    return sb.append('}').toString();
  }

  /**
   * Saves what was read about the labels (positions of their bytes, count, longest name and
   * value, flags) into {@code into[at, at + SAVED_INTS)}, for {@link #resetKnownLabels}.
   */
  public void saveLabels(int[] into, int at) {
    into[at] = labelsStart;
    into[at + 1] = labelsEnd;
    into[at + 2] = labels;
    into[at + 3] = maxNameLength;
    into[at + 4] = maxValueLength;
    into[at + 5] = (ascii ? 1 : 0) | (sortedUnique ? 2 : 0) | (labelsContiguous ? 4 : 0) | (emptyValue ? 8 : 0);
  }

  /**
   * Like {@link #reset} for a series read before, whose label facts were saved with
   * {@link #saveLabels} (and whose {@link #labelsHash()} was {@code hash}): only the samples are
   * read now; the labels' positions are read again only if something needs them ({@link #pairs()},
   * or a key compared with labels that carry no wire encoding).
   *
   * @throws WireFormatException when the bytes are not a well-formed TimeSeries
   */
  public WireSeries resetKnownLabels(byte[] b, int off, int len, int savedHash, int[] saved, int at) {
    buf = b;
    seriesOff = off;
    seriesLen = len;
    symbols = null;
    exemplars = 0;
    createdTimestamp = 0;
    nameRef = -1;
    hasMetadata = false;
    labelsRead = false;
    labelsStart = saved[at];
    labelsEnd = saved[at + 1];
    labels = saved[at + 2];
    maxNameLength = saved[at + 3];
    maxValueLength = saved[at + 4];
    int flags = saved[at + 5];
    ascii = (flags & 1) != 0;
    sortedUnique = (flags & 2) != 0;
    labelsContiguous = (flags & 4) != 0;
    emptyValue = (flags & 8) != 0;
    hash = savedHash;
    hashed = true;
    samples = 0;
    histograms = 0;
    r.reset(b, off, len);
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      int wt = tag & 7;
      if (wt == ProtoReader.LEN && field == TIME_SERIES_SAMPLES) {
        int s = r.lengthDelimited();
        sample(s, r.pos - s);
      } else if (wt == ProtoReader.LEN && field == TIME_SERIES_HISTOGRAMS) {
        int s = r.lengthDelimited();
        histogram(s, r.pos - s);
      } else if (wt == ProtoReader.LEN && field == TIME_SERIES_EXEMPLARS) {
        int s = r.lengthDelimited();
        addExemplar(s, r.pos - s);
      } else {
        r.skip(wt); // labels (known) and unknown fields
      }
    }
    return this;
  }

  private void ensureLabelsRead() {
    if (!labelsRead) {
      reset(buf, seriesOff, seriesLen);
    }
  }

  private void label(int off, int len) {
    // The layout every encoder writes: the name (field 1) and then the value (field 2), each
    // under 128 bytes, nothing else; read without the cursor. Anything else takes the general path.
    byte[] b = buf;
    int end = off + len;
    if (len >= 4 && b[off] == 0x0a) {
      int nLen = b[off + 1];
      int vTagAt = off + 2 + nLen;
      if (nLen >= 0 && vTagAt + 1 < end && b[vTagAt] == 0x12) {
        int vLen = b[vTagAt + 1];
        if (vLen >= 0 && vTagAt + 2 + vLen == end) {
          addLabel(off + 2, nLen, vTagAt + 2, vLen);
          return;
        }
      }
    }
    sub.reset(buf, off, len);
    int nOff = off;
    int nLen = 0;
    int vOff = off;
    int vLen = 0;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      if (wt == ProtoReader.LEN && (tag >>> 3) == 1) {
        nOff = sub.lengthDelimited();
        nLen = sub.pos - nOff;
      } else if (wt == ProtoReader.LEN && (tag >>> 3) == 2) {
        vOff = sub.lengthDelimited();
        vLen = sub.pos - vOff;
      } else {
        sub.skip(wt);
      }
    }
    addLabel(nOff, nLen, vOff, vLen);
  }

  private void addLabel(int nOff, int nLen, int vOff, int vLen) {
    if (labels * 4 == labelPos.length) {
      labelPos = Arrays.copyOf(labelPos, labelPos.length * 2);
    }
    int p = labels * 4;
    labelPos[p] = nOff;
    labelPos[p + 1] = nLen;
    labelPos[p + 2] = vOff;
    labelPos[p + 3] = vLen;
    if (labels > 0 && sortedUnique) {
      sortedUnique = compareBytes(labelPos[p - 4], labelPos[p - 3], nOff, nLen) < 0;
    }
    labels++;
    int bits = 0;
    if (hashOnRead) {
      // One pass computes the hash and the ASCII check (measured faster than two); the hash of
      // labels that are not all ASCII is not used (hasKey).
      long hn = AsciiHash.of(buf, nOff, nLen);
      long hv = AsciiHash.of(buf, vOff, vLen);
      bits = (int) ((hn | hv) >> 32); // negative when either is -1
      hash = 31 * (31 * hash + (int) hn) + (int) hv;
    } else {
      for (int i = nOff, end = nOff + nLen; i < end; i++) {
        bits |= buf[i];
      }
      for (int i = vOff, end = vOff + vLen; i < end; i++) {
        bits |= buf[i];
      }
    }
    if (bits < 0) {
      ascii = false;
    }
    maxNameLength = Math.max(maxNameLength, nLen);
    maxValueLength = Math.max(maxValueLength, vLen);
    emptyValue |= vLen == 0;
  }

  /** Computes {@link #hash} from the label bytes: {@code Arrays.hashCode} of the pairs' String hashes (ASCII). */
  private void ensureHash() {
    if (hashed) {
      return;
    }
    ensureLabelsRead();
    int h = 1;
    for (int i = 0; i < labels; i++) {
      int p = 4 * i;
      h = 31 * (31 * h + stringHash(labelPos[p], labelPos[p + 1])) + stringHash(labelPos[p + 2], labelPos[p + 3]);
    }
    hash = h;
    hashed = true;
  }

  /** {@link String#hashCode()} of the ASCII bytes {@code buf[off, off+len)}. */
  private int stringHash(int off, int len) {
    return (int) AsciiHash.of(buf, off, len);
  }

  private int compareBytes(int aOff, int aLen, int bOff, int bLen) {
    int n = Math.min(aLen, bLen);
    for (int i = 0; i < n; i++) {
      int c = (buf[aOff + i] & 0xff) - (buf[bOff + i] & 0xff);
      if (c != 0) {
        return c;
      }
    }
    return aLen - bLen;
  }

  private void histogram(int off, int len) {
    if (2 * histograms + 2 > histogramPos.length) {
      histogramPos = Arrays.copyOf(histogramPos, histogramPos.length * 2);
    }
    histogramPos[2 * histograms] = off;
    histogramPos[2 * histograms + 1] = len;
    histograms++;
  }

  private HistogramDecoder decoder() {
    HistogramDecoder d = histogramDecoder;
    return d == null ? histogramDecoder = new HistogramDecoder() : d;
  }

  /**
   * Histogram {@code i} of this series as a {@link NativeHistogram}; call only when
   * {@link #histogramProblem(int)} is null (a 2.0 series was checked when read).
   *
   * @throws WireFormatException when the bytes are not a well-formed Histogram
   */
  public NativeHistogram histogram(int i) {
    return decoder().decode(buf, histogramPos[2 * i], histogramPos[2 * i + 1]);
  }

  /** The timestamp of histogram {@code i}, in ms. */
  public long histogramTimestamp(int i) {
    return decoder().timestamp(buf, histogramPos[2 * i], histogramPos[2 * i + 1]);
  }

  /**
   * What makes histogram {@code i} meaningless (reason and message, without the series), or null:
   * spans and buckets that disagree, negative counts, an integer count that disagrees with the
   * buckets ({@link HistogramCheck}), or a schema that is neither exponential (-4..52; above 8 is
   * decoded at 8) nor custom buckets (-53).
   *
   * @throws WireFormatException when the bytes are not a well-formed Histogram
   */
  public @Nullable InvalidSeriesException histogramProblem(int i) {
    HistogramCheck c = histogramCheck == null ? histogramCheck = new HistogramCheck() : histogramCheck;
    return c.problem(buf, histogramPos[2 * i], histogramPos[2 * i + 1]);
  }

  private void sample(int off, int len) {
    sub.reset(buf, off, len);
    long t = 0;
    long v = 0;
    while (sub.more()) {
      int tag = sub.tag();
      int wt = tag & 7;
      if (wt == ProtoReader.FIXED64 && (tag >>> 3) == 1) {
        v = sub.fixed64();
      } else if (wt == ProtoReader.VARINT && (tag >>> 3) == 2) {
        t = sub.varint();
      } else {
        sub.skip(wt);
      }
    }
    if (samples == ts.length) {
      ts = Arrays.copyOf(ts, samples * 2);
      vs = Arrays.copyOf(vs, samples * 2);
    }
    ts[samples] = t;
    vs[samples] = Double.longBitsToDouble(v);
    samples++;
  }

  public int labelCount() {
    return labels;
  }

  public int samples() {
    return samples;
  }

  public long timestamp(int i) {
    return ts[i];
  }

  public double value(int i) {
    return vs[i];
  }

  public int histograms() {
    return histograms;
  }

  /** Exemplars of the series. */
  public int exemplars() {
    return exemplars;
  }

  /** One exemplar as sent: label name/value pairs in wire order, value, timestamp (0: none sent). */
  public record WireExemplar(String[] pairs, double value, long timestamp) {}

  /**
   * Exemplar {@code i} of the series, decoded (labels resolved through the symbols for 2.0).
   *
   * @throws WireFormatException when a label is not valid UTF-8
   */
  public WireExemplar exemplar(int i) {
    int off = exemplarPos[2 * i];
    int len = exemplarPos[2 * i + 1];
    ProtoReader e = new ProtoReader().reset(buf, off, len);
    ProtoReader lab = new ProtoReader();
    java.util.List<String> pairs = new java.util.ArrayList<>(4);
    double value = 0;
    long t = 0;
    Symbols syms = symbols;
    while (e.more()) {
      int tag = e.tag();
      int f = tag >>> 3;
      int wt = tag & 7;
      if (f == 1 && syms != null && (wt == ProtoReader.LEN || wt == ProtoReader.VARINT)) {
        int end = e.pos;
        if (wt == ProtoReader.LEN) {
          int s = e.lengthDelimited();
          end = e.pos;
          e.pos = s;
        }
        do {
          long ref = e.varint();
          int ri = (int) ref;
          pairs.add(utf8(syms.off(ri), syms.len(ri))); // references were checked by resetV2
        } while (e.pos < end);
      } else if (f == 1 && wt == ProtoReader.LEN) {
        int s = e.lengthDelimited();
        lab.reset(buf, s, e.pos - s);
        String name = "";
        String value1 = "";
        while (lab.more()) {
          int lt = lab.tag();
          if ((lt & 7) == ProtoReader.LEN && (lt >>> 3) == 1) {
            int ls = lab.lengthDelimited();
            name = utf8(ls, lab.pos - ls);
          } else if ((lt & 7) == ProtoReader.LEN && (lt >>> 3) == 2) {
            int ls = lab.lengthDelimited();
            value1 = utf8(ls, lab.pos - ls);
          } else {
            lab.skip(lt & 7);
          }
        }
        pairs.add(name);
        pairs.add(value1);
      } else if (f == 2 && wt == ProtoReader.FIXED64) {
        value = Double.longBitsToDouble(e.fixed64());
      } else if (f == 3 && wt == ProtoReader.VARINT) {
        t = e.varint();
      } else {
        e.skip(wt);
      }
    }
    if (pairs.size() % 2 != 0) {
      pairs.add("");
    }
    return new WireExemplar(pairs.toArray(new String[0]), value, t);
  }

  private static String utf8(byte[] b, int off, int len) {
    CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    try {
      return d.decode(ByteBuffer.wrap(b, off, len)).toString();
    } catch (CharacterCodingException ex) {
      throw new WireFormatException("exemplar label is not valid UTF-8");
    }
  }

  private String utf8(int off, int len) {
    return utf8(buf, off, len);
  }

  /** A 2.0 series' created timestamp in ms, 0 when not set (or a 1.0 series). */
  public long createdTimestamp() {
    return createdTimestamp;
  }

  /** Whether this is a remote write 2.0 series. */
  public boolean isV2() {
    return symbols != null;
  }

  /** Whether a 2.0 series carries metadata. */
  boolean hasMetadata() {
    return hasMetadata;
  }

  int metadataType() {
    return metadataType;
  }

  int helpRef() {
    return helpRef;
  }

  int unitRef() {
    return unitRef;
  }

  /** The symbols of a 2.0 series. */
  @Nullable Symbols symbols() {
    return symbols;
  }

  /** Symbol index of the metric name of a 2.0 series, -1 when it has none. */
  int nameRef() {
    return nameRef;
  }

  /** Longest label name in bytes (characters when {@link #hasKey()}). */
  public int maxNameLength() {
    return maxNameLength;
  }

  /** Longest label value in bytes (characters when {@link #hasKey()}). */
  public int maxValueLength() {
    return maxValueLength;
  }

  public boolean hasEmptyValue() {
    return emptyValue;
  }

  /** The buffer the series is read from. */
  public byte[] buffer() {
    return buf;
  }

  /** Where the series' {@code TimeSeries} message starts in {@link #buffer()}. */
  public int seriesOffset() {
    return seriesOff;
  }

  /** The length of the series' {@code TimeSeries} message. */
  public int seriesLength() {
    return seriesLen;
  }

  /** Offset of label {@code i}'s name bytes in {@link #buffer()} (labels in wire order). */
  public int nameOffset(int i) {
    ensureLabelsRead();
    return labelPos[4 * i];
  }

  public int nameLength(int i) {
    ensureLabelsRead();
    return labelPos[4 * i + 1];
  }

  public int valueOffset(int i) {
    ensureLabelsRead();
    return labelPos[4 * i + 2];
  }

  public int valueLength(int i) {
    ensureLabelsRead();
    return labelPos[4 * i + 3];
  }

  /**
   * Whether the labels pass Prometheus' legacy name rules, checked on the bytes: there is a
   * {@code __name__} label whose value matches {@code [a-zA-Z_:][a-zA-Z0-9_:]*}, and every label
   * name matches {@code [a-zA-Z_][a-zA-Z0-9_]*}. False does not say which rule failed: the caller
   * then validates the labels as Strings for the reason.
   */
  public boolean hasLegacyValidNames() {
    ensureLabelsRead();
    boolean metric = false;
    for (int i = 0; i < labels; i++) {
      int nOff = labelPos[4 * i];
      int nLen = labelPos[4 * i + 1];
      if (!legacyName(nOff, nLen, false)) {
        return false;
      }
      if (isMetricName(nOff, nLen)) {
        if (!legacyName(labelPos[4 * i + 2], labelPos[4 * i + 3], true)) {
          return false;
        }
        metric = true;
      }
    }
    return metric;
  }

  /** Per ASCII byte: 1 a letter or '_', 2 a digit, 4 ':'. */
  private static final byte[] NAME_CHARS = new byte[128];

  static {
    for (int c = 'a'; c <= 'z'; c++) {
      NAME_CHARS[c] = 1;
      NAME_CHARS[c - 'a' + 'A'] = 1;
    }
    NAME_CHARS['_'] = 1;
    for (int c = '0'; c <= '9'; c++) {
      NAME_CHARS[c] = 2;
    }
    NAME_CHARS[':'] = 4;
  }

  private boolean legacyName(int off, int len, boolean colon) {
    if (len == 0) {
      return false;
    }
    int allowed = colon ? 7 : 3;
    byte c = buf[off];
    if (c < 0 || (NAME_CHARS[c] & (allowed & ~2)) == 0) {
      return false; // no digit first
    }
    for (int i = off + 1, end = off + len; i < end; i++) {
      c = buf[i];
      if (c < 0 || (NAME_CHARS[c] & allowed) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@link #key()} may be used: all labels ASCII, names sorted and unique. */
  public boolean hasKey() {
    return ascii && sortedUnique;
  }

  /**
   * The hash {@link Labels#hashCode()} has for these labels once sorted; computed without Strings
   * when {@link #hasKey()}, else by building them.
   */
  public int labelsHash() {
    if (hasKey()) {
      ensureHash();
      return hash;
    }
    String[] p = pairs();
    Labels.sortPairs(p);
    return Arrays.hashCode(p);
  }

  /**
   * The labels' canonical encoding, the bytes {@link Labels#withWireEncoding} makes of the same
   * labels (a head series keeps them), built from the request's bytes without a String; null
   * unless {@link #hasKey()} and no value is empty (then only {@link #pairs()} tells the labels).
   * With {@link #labelsHash()}, a new series is created from these alone.
   */
  public byte @Nullable [] canonicalLabels() {
    if (!hasKey() || emptyValue) {
      return null;
    }
    ensureLabelsRead();
    int total = 0;
    for (int k = 0; k < labels; k++) {
      int inner = Labels.wireFieldSize(labelPos[4 * k + 1]) + Labels.wireFieldSize(labelPos[4 * k + 3]);
      total += 1 + Labels.varintSize(inner) + inner;
    }
    byte[] out = new byte[total];
    int p = 0;
    for (int k = 0; k < labels; k++) {
      int nOff = labelPos[4 * k];
      int nLen = labelPos[4 * k + 1];
      int vOff = labelPos[4 * k + 2];
      int vLen = labelPos[4 * k + 3];
      out[p++] = 0x0a;
      p = Labels.varint(out, p, Labels.wireFieldSize(nLen) + Labels.wireFieldSize(vLen));
      p = field(out, p, 0x0a, nOff, nLen);
      p = field(out, p, 0x12, vOff, vLen);
    }
    return out;
  }

  private int field(byte[] out, int p, int tag, int off, int len) {
    if (len == 0) {
      return p; // as protobuf omits an empty string
    }
    out[p++] = (byte) tag;
    p = Labels.varint(out, p, len);
    System.arraycopy(buf, off, out, p, len);
    return p + len;
  }

  /** A stand-in for the {@link Labels} of this series in series lookups; valid until the next reset. */
  public SeriesKey key() {
    if (!hasKey()) {
      throw new IllegalStateException("labels are not ASCII, sorted and unique: build them with pairs()");
    }
    return key;
  }

  /**
   * The labels as an interleaved name/value array in wire order (not sorted, not validated).
   *
   * @throws WireFormatException when a label is not valid UTF-8
   */
  public String[] pairs() {
    ensureLabelsRead();
    String[] out = new String[labels * 2];
    for (int i = 0; i < labels * 2; i++) {
      out[i] = string(labelPos[2 * i], labelPos[2 * i + 1]);
    }
    return out;
  }

  private String string(int off, int len) {
    if (ascii) {
      return new String(buf, off, len, StandardCharsets.ISO_8859_1);
    }
    CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    try {
      return d.decode(ByteBuffer.wrap(buf, off, len)).toString();
    } catch (CharacterCodingException e) {
      throw new WireFormatException("label is not valid UTF-8");
    }
  }

  /** Matches the compact labels ({@link CompactLabels}) of the {@link Labels} with the same names and values. */
  private final class Key implements SeriesKey {
    @Override
    public int hashCode() {
      ensureHash();
      return hash;
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return this == o;
    }

    @Override
    public boolean matches(byte[] compact) {
      if (labelsContiguous && labelsStart >= 0) {
        // Labels in their canonical encoding compare equal. Others (another field order, a
        // field twice) answer false: the caller then takes the slow path, which finds the series.
        return CompactLabels.equalsCanonical(compact, buf, labelsStart, labelsEnd);
      }
      ensureLabelsRead();
      CompactLabels.Cursor c = new CompactLabels.Cursor(compact);
      for (int k = 0; k < labels; k++) {
        if (!c.next() || !c.nameEquals(buf, labelPos[4 * k], labelPos[4 * k + 1])
            || !c.valueEquals(buf, labelPos[4 * k + 2], labelPos[4 * k + 3])) {
          return false;
        }
      }
      return !c.next();
    }

    @Override
    public String toString() {
      return "WireSeries.Key(" + String.join(",", pairs()) + ")";
    }
  }
}
