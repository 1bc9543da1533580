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
 * </pre>
 *
 * <p>Stateless; the builder methods write into a caller-owned {@link ByteSink}.
 */
public final class WalRecords {
  public static final int MAGIC = 0xA7;
  public static final int HEADER_BYTES = 9;
  /** Records larger than this are refused when reading (a corrupt length). */
  public static final int MAX_RECORD_BYTES = 64 << 20;
  static final int TYPE_SERIES = 1;
  static final int TYPE_SAMPLES = 2;

  private WalRecords() {}

  /** Receives decoded records during replay. */
  public interface Visitor {
    void series(int ref, Labels labels);

    void sample(int ref, long t, double v);
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

  /** Appends one SERIES record holding the given series. */
  public static void series(ByteSink sink, int[] refs, Labels[] labels, int n) {
    int start = begin(sink, TYPE_SERIES);
    sink.putUvarint(n);
    for (int i = 0; i < n; i++) {
      sink.putUvarint(refs[i]);
      Labels l = labels[i];
      sink.putUvarint(l.size());
      for (int j = 0; j < l.size(); j++) {
        sink.putString(l.name(j));
        sink.putString(l.value(j));
      }
    }
    end(sink, start);
  }

  /** Appends one SAMPLES record. */
  public static void samples(ByteSink sink, int[] refs, long[] ts, double[] vs, int n) {
    if (n == 0) {
      return;
    }
    int start = begin(sink, TYPE_SAMPLES);
    sink.putUvarint(n);
    int baseRef = refs[0];
    long baseT = ts[0];
    sink.putUvarint(baseRef);
    sink.putVarint(baseT);
    for (int i = 0; i < n; i++) {
      sink.putVarint((long) refs[i] - baseRef);
      sink.putVarint(ts[i] - baseT);
      sink.putDouble(vs[i]);
    }
    end(sink, start);
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
          int numLabels = (int) in.uvarint();
          if (numLabels < 0 || numLabels > 10_000) {
            throw new IllegalStateException("implausible label count " + numLabels);
          }
          String[] pairs = new String[numLabels * 2];
          for (int j = 0; j < pairs.length; j++) {
            pairs[j] = in.string();
          }
          Labels labels = Labels.ofSortedPairs(pairs);
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
