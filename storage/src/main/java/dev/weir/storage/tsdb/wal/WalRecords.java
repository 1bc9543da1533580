package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.LabelNames;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.AsciiHash;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The WAL's record payloads, in Prometheus' encodings ({@code tsdb/record/record.go}), so that
 * Prometheus (and {@code promtool tsdb dump}) replays a tenant's WAL like its own:
 *
 * <pre>
 * SERIES  (1): per series: ref (8 bytes BE), #labels (uvarint), then name and value
 *              (uvarint-prefixed strings) per label; as many series as the payload holds
 * SAMPLES (2): base ref (8 bytes BE), base time (8 bytes BE), then per sample: ref - base
 *              (varint), t - base (varint), value (8 bytes BE IEEE 754 bits)
 * SOURCE     : a SAMPLES record of one sample whose ref is {@link #SOURCE_REF} (2^64 - 1, a ref
 *              no series has) and whose timestamp is the source (Kafka) offset of the records
 *              that follow, up to the next SOURCE
 * </pre>
 *
 * <p>Why SOURCE is a sample: Prometheus 2.42's head replay ({@code tsdb/head_wal.go} {@code
 * loadWAL}) calls a record of an unknown type a corruption (and the server repairs, i.e.
 * truncates, the WAL there), so Weir's own record must be one of its types. A sample of a series
 * ref without a SERIES record is counted as an "unknown series reference" and skipped; one whose
 * timestamp is below the head's minimum valid time is discarded even before. Either way Prometheus
 * reads past it and keeps nothing of it; Weir's reader recognises the ref and reports the offset.
 *
 * <p>Record types are fixed for everyone (1 series, 2 samples, 4 exemplars, 6 metadata, 7/8
 * histograms); a new type gets its own encoder/decoder and a default method on {@link Visitor}.
 * Records are appended to a caller-owned {@link ByteSink} between {@link #begin} and {@link #end}
 * as a logical stream ({@code length | payload}); {@link Wal#append} frames it into pages
 * ({@link WalPages}). Histogram samples (7..10) are encoded by {@link HistogramRecords}, exemplars
 * (4) by {@link ExemplarRecords}, metadata (6) by {@link MetadataRecords}.
 *
 * <p>Stateless.
 */
public final class WalRecords {
  /**
   * Payloads longer than this are refused when reading (taken as damage). The one limit shared by
   * writer and reader: writers split at {@link #MAX_WRITE_PAYLOAD_BYTES}.
   */
  public static final int MAX_RECORD_BYTES = 64 << 20;
  /**
   * Writers split series and samples records so that no payload exceeds this: an eighth of the
   * reader's limit, so a large commit never writes a record that replay would call damage, and
   * one record's buffer stays small.
   */
  public static final int MAX_WRITE_PAYLOAD_BYTES = MAX_RECORD_BYTES / 8;
  /**
   * Bound on one encoded sample: ref delta (difference of two int refs, zig-zag: 5 bytes), time
   * delta (long, zig-zag: 10 bytes), value (8 bytes).
   */
  static final int MAX_SAMPLE_BYTES = 5 + 10 + 8;
  /** A samples record's fixed part: type, base ref, base time. */
  static final int SAMPLES_HEADER_BYTES = 1 + 8 + 8;
  /** A series record's fixed part per series: ref (8) and label count (at most 5 bytes). */
  static final int SERIES_HEADER_BYTES = 8 + 5;
  public static final int TYPE_SERIES = 1;
  public static final int TYPE_SAMPLES = 2;
  /** The series ref of a SOURCE sample: 2^64 - 1 as Prometheus reads it, never a series' ref. */
  public static final long SOURCE_REF = -1L;

  private WalRecords() {}

  /** Receives decoded records during replay. */
  public interface Visitor {
    void series(int ref, Labels labels);

    /**
     * Whether this visitor takes series records as their labels' compact form
     * ({@link #seriesEncoded}) where the reader can make it without Strings (every label ASCII).
     */
    default boolean acceptsEncodedSeries() {
      return false;
    }

    /**
     * A series record whose labels are given in their compact form ({@link CompactLabels}, made in
     * this process) and {@link Labels#hashCode()}; only called when {@link #acceptsEncodedSeries()}.
     * Every value is in full ({@link CompactLabels#withValueNumbers} gives the form with value
     * numbers; a head does that after the replay, when it builds its index).
     */
    default void seriesEncoded(int ref, byte[] compact, int hash) {
      series(ref, CompactLabels.decode(compact, hash));
    }

    void sample(int ref, long t, double v);

    /** A native histogram sample (record types 7-10, {@link HistogramRecords}). */
    default void histogram(int ref, long t, dev.weir.storage.tsdb.chunk.NativeHistogram h) {}

    /** The source (Kafka) offset of the samples that follow; ignored unless a reader needs it. */
    default void source(long offset) {}

    /** An exemplar of series {@code ref} (record type 4); ignored unless a reader needs it. */
    default void exemplar(int ref, long t, double v, Labels labels) {}

    /** A metric family's metadata (record type 6); ignored unless a reader needs it. */
    default void metadata(MetadataRecords.Entry entry) {}

    /** A whole record of {@code bytes} bytes (framing included) was read; for progress reporting. */
    default void recordRead(int bytes) {}
  }

  /** Wraps a failure of the visitor, so a reader does not mistake it for a damaged record. */
  static final class VisitorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    VisitorException(RuntimeException cause) {
      super(cause);
    }

    RuntimeException unwrap() {
      return (RuntimeException) getCause();
    }
  }

  /** Bytes before a record's payload in the logical stream {@link #begin}/{@link #end} build: its length. */
  public static final int HEADER_BYTES = WalPages.LOGICAL_PREFIX_BYTES;

  /**
   * The size (prefix included) of the logical record at {@code pos} of a stream that
   * {@link #begin}/{@link #end} built, or -1 when none fits before {@code limit}. For tests and
   * tools that look at records before {@link Wal#append} frames them.
   */
  public static int validAt(ByteBuffer stream, int pos, int limit) {
    if (limit - pos < HEADER_BYTES + 1) {
      return -1;
    }
    int len = stream.getInt(pos);
    return len <= 0 || len > limit - pos - HEADER_BYTES ? -1 : HEADER_BYTES + len;
  }

  /** Starts a record: reserves its length and writes the type; returns the start for {@link #end}. */
  public static int begin(ByteSink sink, int type) {
    int start = sink.length();
    sink.putBe32(0);
    sink.put(type);
    return start;
  }

  /** Completes the record started at {@code start}: fills its length. */
  public static void end(ByteSink sink, int start) {
    sink.setBe32(start, sink.length() - start - WalPages.LOGICAL_PREFIX_BYTES);
  }

  /** Appends a SOURCE record: the samples records that follow came from this (Kafka) offset. */
  public static void source(ByteSink sink, long offset) {
    int start = begin(sink, TYPE_SAMPLES);
    sink.putBe64(SOURCE_REF).putBe64(offset);
    sink.putVarint(0).putVarint(0).putDouble(0);
    end(sink, start);
  }

  /**
   * The offset of a SOURCE record, or -1 when {@code payload} is another record (or does not
   * decode as a samples record).
   */
  static long sourceOffset(ByteBuffer payload) {
    if (payload.remaining() < SAMPLES_HEADER_BYTES || (payload.get(payload.position()) & 0xff) != TYPE_SAMPLES
        || payload.getLong(payload.position() + 1) != SOURCE_REF) {
      return -1;
    }
    return payload.getLong(payload.position() + 9);
  }

  /** Appends the given series as SERIES records of at most {@link #MAX_WRITE_PAYLOAD_BYTES}. */
  public static void series(ByteSink sink, int[] refs, Labels[] labels, int n) {
    series(sink, refs, labels, n, MAX_WRITE_PAYLOAD_BYTES);
  }

  /**
   * Appends the given series as SERIES records whose payloads stay within {@code maxPayload}
   * (a single series larger than that gets a record of its own). The series are encoded once
   * into a scratch buffer, then copied behind each record's count.
   */
  public static void series(ByteSink sink, int[] refs, Labels[] labels, int n, int maxPayload) {
    seriesRecords(sink, refs, n, maxPayload, (i, body) -> {
      Labels l = labels[i];
      body.putUvarint(l.size());
      for (int j = 0; j < l.size(); j++) {
        body.putString(l.name(j));
        body.putString(l.value(j));
      }
    });
  }

  /**
   * {@link #series(ByteSink, int[], Labels[], int, int)} for head series, whose labels are given in
   * their compact form ({@link CompactLabels}): the same records, copied from the bytes (names from
   * the name dictionary) without decoding a String or making the canonical encoding.
   */
  public static void seriesCompact(ByteSink sink, int[] refs, byte[][] compact, int n, int maxPayload) {
    seriesRecords(sink, refs, n, maxPayload, (i, body) -> {
      byte[] w = compact[i];
      body.putUvarint(CompactLabels.count(w));
      CompactLabels.Cursor c = new CompactLabels.Cursor(w);
      while (c.next()) {
        body.putUvarint(c.nameLength()).put(c.nameArray(), c.nameOffset(), c.nameLength());
        body.putUvarint(c.valueLength()).put(c.valueArray(), c.valueOffset(), c.valueLength());
      }
    });
  }

  /** Writes the labels of series {@code i} (count, then names and values) into a series body. */
  private interface LabelsWriter {
    void write(int i, ByteSink body);
  }

  /**
   * Encodes each series (ref, then its labels by {@code labels}) once into a scratch buffer, then
   * copies them behind each record's count.
   */
  private static void seriesRecords(ByteSink sink, int[] refs, int n, int maxPayload, LabelsWriter labels) {
    if (n == 0) {
      return;
    }
    ByteSink body = new ByteSink(Math.min(1 << 16, maxPayload));
    int[] ends = new int[n];
    for (int i = 0; i < n; i++) {
      body.putBe64(refs[i]);
      labels.write(i, body);
      ends[i] = body.length();
    }
    seriesRecords(sink, body, ends, n, maxPayload);
  }

  /** Copies the encoded series {@code body} (series i ends at {@code ends[i]}) into SERIES records. */
  private static void seriesRecords(ByteSink sink, ByteSink body, int[] ends, int n, int maxPayload) {
    int first = 0;
    while (first < n) {
      int from = first == 0 ? 0 : ends[first - 1];
      int last = first + 1; // exclusive; at least one series per record
      while (last < n && 1 + ends[last] - from <= maxPayload) {
        last++;
      }
      int start = begin(sink, TYPE_SERIES);
      sink.put(body.array(), from, ends[last - 1] - from);
      end(sink, start);
      first = last;
    }
  }

  /** Appends samples as SAMPLES records of at most {@link #MAX_WRITE_PAYLOAD_BYTES}. */
  public static void samples(ByteSink sink, int[] refs, long[] ts, double[] vs, int n) {
    samples(sink, refs, ts, vs, n, MAX_WRITE_PAYLOAD_BYTES);
  }

  /** Appends samples as SAMPLES records whose payloads stay within {@code maxPayload}. */
  public static void samples(ByteSink sink, int[] refs, long[] ts, double[] vs, int n, int maxPayload) {
    int perRecord = Math.max(1, (maxPayload - SAMPLES_HEADER_BYTES) / MAX_SAMPLE_BYTES);
    for (int from = 0; from < n; from += perRecord) {
      samplesRecord(sink, refs, ts, vs, from, Math.min(n, from + perRecord));
    }
  }

  private static void samplesRecord(ByteSink sink, int[] refs, long[] ts, double[] vs, int from, int to) {
    int start = begin(sink, TYPE_SAMPLES);
    int baseRef = refs[from];
    long baseT = ts[from];
    sink.putBe64(baseRef);
    sink.putBe64(baseT);
    for (int i = from; i < to; i++) {
      sink.putVarint((long) refs[i] - baseRef);
      sink.putVarint(ts[i] - baseT);
      sink.putDouble(vs[i]);
    }
    end(sink, start);
  }

  /** Reads a label count and that many name/value strings (a SERIES or EXEMPLARS record's labels). */
  static Labels labels(ByteSource in, int maxLabels) {
    int numLabels = (int) in.uvarint();
    if (numLabels < 0 || numLabels > maxLabels) {
      throw new IllegalStateException("implausible label count " + numLabels);
    }
    String[] pairs = new String[numLabels * 2];
    for (int j = 0; j < pairs.length; j++) {
      pairs[j] = in.string();
    }
    return Labels.ofSortedPairs(pairs);
  }

  /** Decodes one payload (without framing) into the visitor. */
  public static void decode(ByteBuffer payload, Visitor v) {
    decode(payload, v, null);
  }

  /** As above, label strings read through {@code strings} (a replay's: repeated strings shared). */
  public static void decode(ByteBuffer payload, Visitor v, dev.weir.storage.util.@Nullable StringCache strings) {
    ByteSource in = new ByteSource(payload, strings);
    int type = in.get();
    switch (type) {
      case TYPE_SERIES -> {
        boolean encoded = v.acceptsEncodedSeries();
        int[] scratch = encoded ? new int[64] : null;
        int[] recent = encoded ? new int[16] : null; // name numbers by label position, for the next series
        while (in.remaining() > 0) {
          int ref = ref(in.be64());
          byte[] compact = scratch == null ? null : encodedLabels(in, 10_000, scratch, recent);
          if (compact != null) {
            try {
              v.seriesEncoded(ref, compact, scratch[0]);
            } catch (RuntimeException e) {
              throw new VisitorException(e);
            }
            continue;
          }
          Labels labels = labels(in);
          try {
            v.series(ref, labels);
          } catch (RuntimeException e) {
            throw new VisitorException(e);
          }
        }
      }
      case TYPE_SAMPLES -> {
        if (in.remaining() == 0) {
          return;
        }
        long baseRef = in.be64();
        long baseT = in.be64();
        while (in.remaining() > 0) {
          long ref = baseRef + in.varint();
          long t = baseT + in.varint();
          double value = in.getDouble();
          try {
            if (ref == SOURCE_REF) {
              v.source(t);
            } else {
              v.sample(ref(ref), t, value);
            }
          } catch (RuntimeException e) {
            throw new VisitorException(e);
          }
        }
      }
      case ExemplarRecords.TYPE -> ExemplarRecords.decode(in, v);
      case MetadataRecords.TYPE -> MetadataRecords.decode(in, v);
      default -> {
        if (!HistogramRecords.isHistogramType(type)) {
          throw new IllegalStateException("unknown record type " + type);
        }
        HistogramRecords.decode(type, in, v);
      }
    }
  }

  /**
   * Reads a series record's labels (count, then uvarint-prefixed strings) straight into the
   * compact form a head series keeps ({@link CompactLabels}), without a String: a replay's reading
   * thread then only copies bytes and looks names up in the name dictionary ({@code recent}: as
   * {@link CompactLabels#fromCanonical}'s, this thread's). Returns the form with the labels'
   * {@link Labels#hashCode()} in {@code scratch[0]} ({@code scratch} is a work array the caller
   * reuses), or null with the position unchanged when a string is not ASCII (its String hash needs
   * the decoded characters: the caller reads {@link Labels} then).
   */
  static byte @Nullable [] encodedLabels(ByteSource in, int maxLabels, int[] scratch, int[] recent) {
    ByteBuffer buf = in.buffer();
    int start = buf.position();
    int numLabels = (int) in.uvarint();
    if (numLabels < 0 || numLabels > maxLabels) {
      throw new IllegalStateException("implausible label count " + numLabels);
    }
    int strings = 2 * numLabels;
    int[] pos = scratch.length >= 2 * strings + 1 ? scratch : new int[2 * strings + 1];
    for (int j = 0; j < strings; j++) {
      long n = in.uvarint();
      if (n > buf.remaining()) {
        throw new IllegalStateException("string length " + n + " beyond the data");
      }
      pos[1 + 2 * j] = buf.position();
      pos[2 + 2 * j] = (int) n;
      buf.position(buf.position() + (int) n);
    }
    // The hash and the ASCII check first (a label past ASCII is read as Labels), then the names'
    // numbers and the size, then the bytes.
    byte[] array = buf.hasArray() ? buf.array() : null;
    int base = buf.hasArray() ? buf.arrayOffset() : 0;
    byte[] name = array != null ? null : new byte[LabelNames.MAX_NAME_BYTES];
    int hash = 1;
    int total = 0;
    for (int k = 0; k < numLabels; k++) {
      int nameOff = pos[1 + 4 * k];
      int nameLen = pos[2 + 4 * k];
      int valueLen = pos[4 + 4 * k];
      long hn = asciiHash(buf, array, base, nameOff, nameLen);
      long hv = asciiHash(buf, array, base, pos[3 + 4 * k], valueLen);
      if (hn < 0 || hv < 0) {
        buf.position(start);
        return null;
      }
      hash = 31 * (31 * hash + (int) hn) + (int) hv;
      int id;
      if (array != null) {
        id = CompactLabels.nameNumber(array, base + nameOff, nameLen, recent, k);
      } else if (nameLen <= name.length) {
        buf.get(nameOff, name, 0, nameLen);
        id = CompactLabels.nameNumber(name, 0, nameLen, recent, k);
      } else {
        id = -1;
      }
      pos[1 + 4 * k] = id < 0 ? nameOff : -1 - id; // the name's number, or its offset when in full
      total += (id >= 0 ? Labels.varintSize(id + 1) : 1 + Labels.varintSize(nameLen) + nameLen)
          + CompactLabels.valueSize(-1, valueLen);
    }
    byte[] out = new byte[total];
    int p = 0;
    for (int k = 0; k < numLabels; k++) {
      int named = pos[1 + 4 * k];
      int nameLen = pos[2 + 4 * k];
      if (named < 0) {
        p = Labels.varint(out, p, -named); // -1 - id: the number is id + 1
      } else {
        out[p++] = 0;
        p = Labels.varint(out, p, nameLen);
        buf.get(named, out, p, nameLen);
        p += nameLen;
      }
      int valueLen = pos[4 + 4 * k];
      p = Labels.varint(out, p, 2 * valueLen);
      buf.get(pos[3 + 4 * k], out, p, valueLen);
      p += valueLen;
    }
    scratch[0] = hash;
    return out;
  }

  /** {@link AsciiHash#of} of {@code len} bytes at absolute position {@code off} of {@code buf}. */
  private static long asciiHash(ByteBuffer buf, byte @Nullable [] array, int base, int off, int len) {
    if (array != null) {
      return AsciiHash.of(array, base + off, len);
    }
    byte[] b = new byte[len];
    buf.get(off, b, 0, len);
    return AsciiHash.of(b, 0, len);
  }

  /** A label set: count (uvarint), then names and values (uvarint-prefixed strings), sorted. */
  static Labels labels(ByteSource in) {
    return labels(in, 10_000);
  }

  /** A series ref as Weir holds it: refs outside 0..2^31 - 1 are not Weir's (damage). */
  private static int ref(long ref) {
    if (ref < 0 || ref > Integer.MAX_VALUE) {
      throw new IllegalStateException("series ref " + Long.toUnsignedString(ref) + " out of range");
    }
    return (int) ref;
  }
}
