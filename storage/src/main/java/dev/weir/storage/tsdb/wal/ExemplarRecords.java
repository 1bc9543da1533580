package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;

/**
 * WAL record type 4, exemplars, in Prometheus' payload encoding ({@code tsdb/record}'s
 * {@code Exemplars}), so a Prometheus-format reader understands it:
 *
 * <pre>
 * type 4 (1 byte) | base ref (8 bytes BE) | base t (8 bytes BE)
 *   then per exemplar: ref-base (varint) | t-base (varint) | value (8 bytes BE IEEE 754 bits)
 *                      | #labels (uvarint) | per label: name, value (uvarint length + UTF-8)
 * </pre>
 *
 * An exemplar record follows the SERIES record of every ref it names. Stateless.
 */
public final class ExemplarRecords {
  public static final int TYPE = 4;
  /** Bound on a label set: Prometheus' 128 runes of names and values, 4 bytes per rune, plus lengths. */
  static final int MAX_LABEL_BYTES = 128 * 4 + 2 * 16 * 5 + 5;
  /** Bound on one encoded exemplar: ref delta, time delta, value, labels. */
  static final int MAX_EXEMPLAR_BYTES = 10 + 10 + 8 + MAX_LABEL_BYTES;

  private ExemplarRecords() {}

  /** Appends exemplars {@code [0, n)} as records whose payloads stay within {@code maxPayload}. */
  public static void write(ByteSink sink, int[] refs, long[] ts, double[] vs, Labels[] labels, int n, int maxPayload) {
    int perRecord = Math.max(1, (maxPayload - 17) / MAX_EXEMPLAR_BYTES);
    for (int from = 0; from < n; from += perRecord) {
      int to = Math.min(n, from + perRecord);
      int start = WalRecords.begin(sink, TYPE);
      int baseRef = refs[from];
      long baseT = ts[from];
      sink.putBe64(baseRef).putBe64(baseT);
      for (int i = from; i < to; i++) {
        sink.putVarint((long) refs[i] - baseRef).putVarint(ts[i] - baseT).putDouble(vs[i]);
        Labels l = labels[i];
        sink.putUvarint(l.size());
        for (int j = 0; j < l.size(); j++) {
          sink.putString(l.name(j)).putString(l.value(j));
        }
      }
      WalRecords.end(sink, start);
    }
  }

  /** Decodes the payload after its type byte. */
  static void decode(ByteSource in, WalRecords.Visitor v) {
    if (in.remaining() == 0) {
      return; // Prometheus writes an empty record as the type byte alone
    }
    long baseRef = in.be64();
    long baseT = in.be64();
    while (in.remaining() > 0) {
      int ref = (int) (baseRef + in.varint());
      long t = baseT + in.varint();
      double value = in.getDouble();
      Labels labels = WalRecords.labels(in, 1_000);
      try {
        v.exemplar(ref, t, value, labels);
      } catch (RuntimeException e) {
        throw new WalRecords.VisitorException(e);
      }
    }
  }
}
