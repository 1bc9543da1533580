package dev.weir.storage.tsdb.wal;

import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;

/**
 * WAL record type 6, metric metadata, in Prometheus' payload encoding ({@code tsdb/record}'s
 * {@code Metadata}):
 *
 * <pre>
 * type 6 (1 byte), then per entry: ref (uvarint) | metric type (1 byte) | #fields (uvarint)
 *                                  | per field: name, value (uvarint length + UTF-8)
 * </pre>
 *
 * Weir writes three fields: {@code UNIT}, {@code HELP} (Prometheus' names) and {@code FAMILY},
 * the metric family name, because Weir keeps metadata per family (as remote write 1.0 sends it)
 * and a family may have no series in the head; Prometheus skips fields it does not know. The ref
 * names a series of the family written before (0 when the request had none). The metric type
 * numbers are those of {@code prometheus.MetricMetadata.MetricType}, which equal Prometheus'
 * record types (0 unknown, 1 counter, 2 gauge, 3 histogram, 4 gauge histogram, 5 summary, 6 info,
 * 7 stateset). Stateless.
 */
public final class MetadataRecords {
  public static final int TYPE = 6;
  static final String UNIT = "UNIT";
  static final String HELP = "HELP";
  static final String FAMILY = "FAMILY";

  private MetadataRecords() {}

  /** One entry of a metadata record. */
  public record Entry(int ref, int type, String family, String unit, String help) {}

  /** Appends the entries as one record each time the payload would pass {@code maxPayload}. */
  public static void write(ByteSink sink, java.util.List<Entry> entries, int maxPayload) {
    int i = 0;
    while (i < entries.size()) {
      int start = WalRecords.begin(sink, TYPE);
      int first = i;
      while (i < entries.size() && (i == first || sink.length() - start - WalRecords.HEADER_BYTES < maxPayload / 2)) {
        Entry e = entries.get(i++);
        sink.putUvarint(e.ref() & 0xffffffffL).put(e.type()).putUvarint(3);
        sink.putString(UNIT).putString(e.unit()).putString(HELP).putString(e.help());
        sink.putString(FAMILY).putString(e.family());
      }
      WalRecords.end(sink, start);
    }
  }

  /** Decodes the payload after its type byte; entries without a family name are skipped. */
  static void decode(ByteSource in, WalRecords.Visitor v) {
    while (in.remaining() > 0) {
      int ref = (int) in.uvarint();
      int type = in.get() & 0xff;
      long fields = in.uvarint();
      String unit = "";
      String help = "";
      String family = "";
      for (long f = 0; f < fields; f++) {
        String name = in.string();
        String value = in.string();
        switch (name) {
          case UNIT -> unit = value;
          case HELP -> help = value;
          case FAMILY -> family = value;
          default -> {
            // a field of a newer writer: skipped, as Prometheus does
          }
        }
      }
      if (family.isEmpty()) {
        continue; // written by Prometheus: no family name; Weir cannot place it
      }
      try {
        v.metadata(new Entry(ref, type, family, unit, help));
      } catch (RuntimeException e) {
        throw new WalRecords.VisitorException(e);
      }
    }
  }
}
