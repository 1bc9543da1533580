package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The WAL record format. Every record is framed as
 *
 * <pre>
 * magic 0xA7 (1 byte) | payload length (4 bytes BE) | CRC32C of payload (4 bytes BE) | payload
 * </pre>
 *
 * so a torn or flipped record is detected, and the magic lets a reader look past a bad record for
 * later valid ones (to tell a torn tail from corruption in the middle). Payloads:
 *
 * <pre>
 * SERIES  (1): count, then per series: ref, #labels, name, value, ...        (uvarints, strings)
 * SAMPLES (2): count, base ref, base t, then per sample: ref-base (varint), t-base (varint),
 *              value (8 bytes BE IEEE 754 bits)
 * SOURCE  (3): source offset (varint): the Kafka offset of the record whose samples follow, up to
 *              the next SOURCE record (optional; WALs without it read as before)
 * EXEMPLARS (4): Prometheus' exemplar payload, see {@link ExemplarRecords}
 * METADATA  (6): Prometheus' metadata payload, see {@link MetadataRecords}
 * </pre>
 *
 * <p>Stateless; the builder methods write into a caller-owned {@link ByteSink}.
 */
public final class WalRecords {
  public static final int MAGIC = 0xA7;
  public static final int HEADER_BYTES = 9;
  /**
   * Payloads longer than this are refused when reading (taken as a corrupt length). The one limit
   * shared by writer and reader: writers split at {@link #MAX_WRITE_PAYLOAD_BYTES}.
   */
  public static final int MAX_RECORD_BYTES = 64 << 20;
  /**
   * Writers split series and samples records so that no payload exceeds this: an eighth of the
   * reader's limit, so a large commit never writes a record that replay would call damage, and
   * one record's buffer stays small.
   */
  public static final int MAX_WRITE_PAYLOAD_BYTES = MAX_RECORD_BYTES / 8;
  /**
   * Bound on one encoded sample: ref delta (int difference, zig-zag: 5 bytes), time delta (long,
   * zig-zag: 10 bytes), value (8 bytes).
   */
  static final int MAX_SAMPLE_BYTES = 5 + 10 + 8;
  /** Bound on a samples record's fixed part: type, count, base ref, base time. */
  static final int SAMPLES_HEADER_BYTES = 1 + 5 + 5 + 10;
  static final int TYPE_SERIES = 1;
  static final int TYPE_SAMPLES = 2;
  static final int TYPE_SOURCE = 3;

  private WalRecords() {}

  /** Receives decoded records during replay. */
  public interface Visitor {
    void series(int ref, Labels labels);

    void sample(int ref, long t, double v);

    /** The source (Kafka) offset of the samples that follow; ignored unless a reader needs it. */
    default void source(long offset) {}

    /** An exemplar of series {@code ref} (record type 4); ignored unless a reader needs it. */
    default void exemplar(int ref, long t, double v, Labels labels) {}

    /** A metric family's metadata (record type 6); ignored unless a reader needs it. */
    default void metadata(MetadataRecords.Entry entry) {}

    /** A whole record of {@code bytes} bytes (header included) was read; for progress reporting. */
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

  /** Starts a record: reserves the header; returns the record's start for {@link #end}. */
  public static int begin(ByteSink sink, int type) {
    int start = sink.length();
    sink.put(MAGIC).putBe32(0).putBe32(0);
    sink.put(type);
    return start;
  }

  /** Completes the record started at {@code start}: fills length and checksum. */
  public static void end(ByteSink sink, int start) {
    int payloadStart = start + HEADER_BYTES;
    int len = sink.length() - payloadStart;
    CRC32C crc = new CRC32C();
    crc.update(sink.array(), payloadStart, len);
    sink.setBe32(start + 1, len);
    sink.setBe32(start + 5, (int) crc.getValue());
  }

  /** Appends a SOURCE record: the samples records that follow came from this (Kafka) offset. */
  public static void source(ByteSink sink, long offset) {
    int start = begin(sink, TYPE_SOURCE);
    sink.putVarint(offset);
    end(sink, start);
  }

  /**
   * The offset of the SOURCE record framed at {@code pos} (already validated), or -1 when the
   * record is of another type.
   */
  static long sourceOffsetAt(ByteBuffer file, int pos) {
    if ((file.get(pos + HEADER_BYTES) & 0xff) != TYPE_SOURCE) {
      return -1;
    }
    ByteBuffer payload = file.duplicate();
    payload.position(pos + HEADER_BYTES + 1);
    return new ByteSource(payload.slice()).varint();
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
    if (n == 0) {
      return;
    }
    ByteSink body = new ByteSink(Math.min(1 << 16, maxPayload));
    int[] ends = new int[n];
    for (int i = 0; i < n; i++) {
      body.putUvarint(refs[i]);
      Labels l = labels[i];
      body.putUvarint(l.size());
      for (int j = 0; j < l.size(); j++) {
        body.putString(l.name(j));
        body.putString(l.value(j));
      }
      ends[i] = body.length();
    }
    int first = 0;
    while (first < n) {
      int from = first == 0 ? 0 : ends[first - 1];
      int last = first + 1; // exclusive; at least one series per record
      while (last < n && 1 + 5 + ends[last] - from <= maxPayload) {
        last++;
      }
      int start = begin(sink, TYPE_SERIES);
      sink.putUvarint(last - first);
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
    sink.putUvarint(to - from);
    int baseRef = refs[from];
    long baseT = ts[from];
    sink.putUvarint(baseRef);
    sink.putVarint(baseT);
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

  /** Decodes one payload (without frame) into the visitor. */
  public static void decode(ByteBuffer payload, Visitor v) {
    ByteSource in = new ByteSource(payload);
    int type = in.get();
    switch (type) {
      case TYPE_SERIES -> {
        long n = in.uvarint();
        for (long i = 0; i < n; i++) {
          int ref = (int) in.uvarint();
          Labels labels = labels(in, 10_000);
          try {
            v.series(ref, labels);
          } catch (RuntimeException e) {
            throw new VisitorException(e);
          }
        }
      }
      case TYPE_SAMPLES -> {
        long n = in.uvarint();
        long baseRef = in.uvarint();
        long baseT = in.varint();
        for (long i = 0; i < n; i++) {
          int ref = (int) (baseRef + in.varint());
          long t = baseT + in.varint();
          double value = in.getDouble();
          try {
            v.sample(ref, t, value);
          } catch (RuntimeException e) {
            throw new VisitorException(e);
          }
        }
      }
      case TYPE_SOURCE -> {
        long offset = in.varint();
        try {
          v.source(offset);
        } catch (RuntimeException e) {
          throw new VisitorException(e);
        }
      }
      case ExemplarRecords.TYPE -> ExemplarRecords.decode(in, v);
      case MetadataRecords.TYPE -> MetadataRecords.decode(in, v);
      default -> throw new IllegalStateException("unknown record type " + type);
    }
    if (in.remaining() != 0) {
      throw new IllegalStateException(in.remaining() + " trailing bytes in record");
    }
  }

  /**
   * Checks the record framed at {@code pos}: returns its total length (header + payload) when the
   * magic, length and checksum are right, or -1.
   */
  static int validAt(ByteBuffer file, int pos, int limit) {
    if (pos + HEADER_BYTES > limit || (file.get(pos) & 0xff) != MAGIC) {
      return -1;
    }
    int len = file.getInt(pos + 1);
    if (len <= 0 || len > MAX_RECORD_BYTES || (long) pos + HEADER_BYTES + len > limit) {
      return -1;
    }
    int crc = file.getInt(pos + 5);
    CRC32C c = new CRC32C();
    ByteBuffer payload = file.duplicate();
    payload.limit(pos + HEADER_BYTES + len).position(pos + HEADER_BYTES);
    c.update(payload);
    return (int) c.getValue() == crc ? HEADER_BYTES + len : -1;
  }
}
