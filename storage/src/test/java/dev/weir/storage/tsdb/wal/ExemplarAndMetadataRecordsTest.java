package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExemplarAndMetadataRecordsTest {
  /** Records every exemplar and metadata entry it is given. */
  private static final class Events implements WalRecords.Visitor {
    final List<String> events = new ArrayList<>();

    @Override
    public void series(int ref, Labels labels) {
      events.add("s " + ref);
    }

    @Override
    public void sample(int ref, long t, double v) {
      events.add("x " + ref);
    }

    @Override
    public void exemplar(int ref, long t, double v, Labels labels) {
      events.add("e " + ref + " " + t + " " + v + " " + labels);
    }

    @Override
    public void metadata(MetadataRecords.Entry e) {
      events.add("m " + e);
    }
  }

  /** The payloads of the framed records in {@code sink}. */
  private static List<ByteBuffer> payloads(ByteSink sink) {
    List<ByteBuffer> out = new ArrayList<>();
    ByteBuffer all = ByteBuffer.wrap(sink.toByteArray());
    int pos = 0;
    while (pos < all.limit()) {
      int len = WalRecords.validAt(all, pos, all.limit());
      assertThat(len).as("a valid record at " + pos).isPositive();
      out.add(ByteBuffer.wrap(sink.toByteArray(), pos + WalRecords.HEADER_BYTES, len - WalRecords.HEADER_BYTES).slice());
      pos += len;
    }
    return out;
  }

  @Test
  void exemplarPayloadIsPrometheusEncoding() {
    ByteSink sink = new ByteSink(64);
    ExemplarRecords.write(sink, new int[] {2, 3}, new long[] {1000, 999}, new double[] {1.0, -0.5},
        new Labels[] {Labels.of("trace_id", "ab"), Labels.EMPTY}, 2, WalRecords.MAX_WRITE_PAYLOAD_BYTES);
    List<ByteBuffer> p = payloads(sink);
    assertThat(p).hasSize(1);
    byte[] b = new byte[p.get(0).remaining()];
    p.get(0).duplicate().get(b);
    // type 4 | base ref BE64 2 | base t BE64 1000 | ref delta 0, t delta 0 (zig-zag varints), value
    // 1.0 BE | 1 label: "trace_id" "ab" | ref delta +1 (2), t delta -1 (1), value -0.5 | 0 labels
    assertThat(HexFormat.of().formatHex(b)).isEqualTo("04" + "0000000000000002" + "00000000000003e8"
        + "00" + "00" + "3ff0000000000000" + "01" + "08" + hex("trace_id") + "02" + hex("ab")
        + "02" + "01" + "bfe0000000000000" + "00");
    Events v = new Events();
    WalRecords.decode(p.get(0), v);
    assertThat(v.events).containsExactly("e 2 1000 1.0 {trace_id=\"ab\"}", "e 3 999 -0.5 {}");
  }

  @Test
  void metadataPayloadIsPrometheusEncodingWithAFamilyField() {
    ByteSink sink = new ByteSink(64);
    MetadataRecords.write(sink, List.of(new MetadataRecords.Entry(7, 1, "req", "s", "h")),
        WalRecords.MAX_WRITE_PAYLOAD_BYTES);
    ByteBuffer p = payloads(sink).get(0);
    byte[] b = new byte[p.remaining()];
    p.duplicate().get(b);
    // type 6 | ref 7 | counter 1 | 3 fields | UNIT s | HELP h | FAMILY req
    assertThat(HexFormat.of().formatHex(b)).isEqualTo("06" + "07" + "01" + "03" + "04" + hex("UNIT") + "01"
        + hex("s") + "04" + hex("HELP") + "01" + hex("h") + "06" + hex("FAMILY") + "03" + hex("req"));
    Events v = new Events();
    WalRecords.decode(p, v);
    assertThat(v.events).containsExactly("m Entry[ref=7, type=1, family=req, unit=s, help=h]");
  }

  @Test
  void prometheusMetadataWithoutFamilyAndUnknownFieldsIsSkippedCleanly() {
    ByteSink sink = new ByteSink(64);
    int start = WalRecords.begin(sink, MetadataRecords.TYPE);
    // Prometheus' own entry (no FAMILY), then one of Weir's with an extra field a newer writer added.
    sink.putUvarint(1).put(2).putUvarint(2).putString("UNIT").putString("").putString("HELP").putString("x");
    sink.putUvarint(2).put(2).putUvarint(2).putString("NEW").putString("?").putString("FAMILY").putString("g");
    WalRecords.end(sink, start);
    Events v = new Events();
    WalRecords.decode(payloads(sink).get(0), v);
    assertThat(v.events).containsExactly("m Entry[ref=2, type=2, family=g, unit=, help=]");
  }

  @Test
  void largeExemplarBatchesAreSplitIntoRecordsWithinThePayloadLimit() {
    int n = 100;
    int[] refs = new int[n];
    long[] ts = new long[n];
    double[] vs = new double[n];
    Labels[] ls = new Labels[n];
    for (int i = 0; i < n; i++) {
      refs[i] = i + 1;
      ts[i] = i;
      vs[i] = i;
      ls[i] = Labels.of("trace_id", "x".repeat(100));
    }
    ByteSink sink = new ByteSink(64);
    ExemplarRecords.write(sink, refs, ts, vs, ls, n, 2 * ExemplarRecords.MAX_EXEMPLAR_BYTES + 17);
    List<ByteBuffer> p = payloads(sink);
    assertThat(p).hasSize(50);
    Events v = new Events();
    p.forEach(b -> WalRecords.decode(b, v));
    assertThat(v.events).hasSize(n).last().asString().startsWith("e 100 99 99.0");
  }

  @Test
  void checkpointTailIsWrittenAfterTheFilteredRecordsAndOldExemplarsAreDropped() throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("cp");
    WalMetrics metrics = WalMetrics.noop();
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      ByteSink b = new ByteSink(64);
      WalRecords.series(b, new int[] {1}, new Labels[] {Labels.of("__name__", "a")}, 1);
      WalRecords.samples(b, new int[] {1}, new long[] {10}, new double[] {1}, 1);
      ExemplarRecords.write(b, new int[] {1}, new long[] {10}, new double[] {1}, new Labels[] {Labels.EMPTY}, 1,
          WalRecords.MAX_WRITE_PAYLOAD_BYTES);
      wal.append(b);
      int closed = wal.roll();
      Checkpoint.create(dir, closed, ref -> true, 0, metrics, "t", sink -> ExemplarRecords.write(sink,
          new int[] {1}, new long[] {11}, new double[] {2}, new Labels[] {Labels.EMPTY}, 1, 1 << 20));
    }
    Events v = new Events();
    WalReader.replay(dir, v, false, metrics, "t");
    assertThat(v.events).containsExactly("s 1", "x 1", "e 1 11 2.0 {}");
  }

  private static String hex(String s) {
    return HexFormat.of().formatHex(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}
