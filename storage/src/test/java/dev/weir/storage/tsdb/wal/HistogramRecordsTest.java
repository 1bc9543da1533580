package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.util.ByteSink;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HistogramRecordsTest {
  record Got(int type, int ref, long t, NativeHistogram h) {}

  static final NativeHistogram INT = new NativeHistogram(false, NativeHistogram.RESET_NO, 3, 1e-128, 1, 10, 42.5,
      new int[] {0, 2, 3, 1}, new double[] {3, 2, 4}, new int[] {-2, 1}, new double[] {2}, new double[0]);
  static final NativeHistogram FLOAT = new NativeHistogram(true, NativeHistogram.RESET_GAUGE, -1, 0.5, 0.25, 7.75,
      -3.5, new int[] {4, 1}, new double[] {7.5}, new int[0], new double[0], new double[0]);
  static final NativeHistogram CUSTOM_INT = new NativeHistogram(false, NativeHistogram.RESET_YES,
      NativeHistogram.CUSTOM_BUCKETS_SCHEMA, 0, 0, 5, 2, new int[] {0, 3}, new double[] {1, 0, 4}, new int[0],
      new double[0], new double[] {0.5, 1, 2.5});
  static final NativeHistogram CUSTOM_FLOAT = new NativeHistogram(true, NativeHistogram.RESET_UNKNOWN,
      NativeHistogram.CUSTOM_BUCKETS_SCHEMA, 0, 0, 1.5, 2, new int[] {1, 1}, new double[] {1.5}, new int[0],
      new double[0], new double[] {0.5, 1});

  /** Every framed record of the sink, decoded. */
  static List<Got> read(ByteSink sink) {
    List<Got> out = new ArrayList<>();
    ByteBuffer all = ByteBuffer.wrap(sink.toByteArray());
    int pos = 0;
    while (pos < all.limit()) {
      int n = WalRecords.validAt(all, pos, all.limit());
      assertThat(n).as("record at %d is valid", pos).isPositive();
      int type = all.get(pos + WalRecords.HEADER_BYTES) & 0xff;
      ByteBuffer payload = all.duplicate().position(pos + WalRecords.HEADER_BYTES).limit(pos + n).slice();
      WalRecords.decode(payload, new WalRecords.Visitor() {
        @Override
        public void series(int ref, dev.weir.storage.tsdb.labels.Labels labels) {}

        @Override
        public void sample(int ref, long t, double v) {}

        @Override
        public void histogram(int ref, long t, NativeHistogram h) {
          out.add(new Got(type, ref, t, h));
        }
      });
      pos += n;
    }
    return out;
  }

  @Test
  void roundTripsEveryKindInItsPrometheusRecordTypeInCommitOrder() {
    HistogramBatch b = new HistogramBatch();
    b.add(7, 1_000, INT);
    b.add(3, 900, FLOAT);
    b.add(9, 1_100, CUSTOM_INT);
    b.add(5, -20, INT);
    b.add(2, 5, CUSTOM_FLOAT);
    ByteSink sink = new ByteSink(64);
    b.writeTo(sink);
    assertThat(b.size()).isZero();
    // In commit order: a replay applies them as they were appended.
    assertThat(read(sink)).containsExactly(
        new Got(7, 7, 1_000, INT), new Got(8, 3, 900, FLOAT), new Got(9, 9, 1_100, CUSTOM_INT),
        new Got(7, 5, -20, INT), new Got(10, 2, 5, CUSTOM_FLOAT));
  }

  @Test
  void writesThePayloadPrometheusWrites() {
    ByteSink sink = new ByteSink(64);
    HistogramRecords.append(sink, new int[] {258}, new long[] {1_000}, new NativeHistogram[] {FLOAT}, 1, 1 << 20);
    byte[] rec = sink.toByteArray();
    ByteBuffer p = ByteBuffer.wrap(rec, WalRecords.HEADER_BYTES, rec.length - WalRecords.HEADER_BYTES).slice();
    assertThat(p.get()).isEqualTo((byte) 8);
    assertThat(p.getLong()).isEqualTo(258); // base ref, big endian
    assertThat(p.getLong()).isEqualTo(1_000); // base time
    assertThat(p.get()).isZero(); // ref delta 0 (varint)
    assertThat(p.get()).isZero(); // time delta 0
    assertThat(p.get()).isEqualTo((byte) NativeHistogram.RESET_GAUGE);
    assertThat(p.get()).isEqualTo((byte) 1); // schema -1, zig-zag
    assertThat(p.getDouble()).isEqualTo(0.5); // zero threshold
    assertThat(p.getDouble()).isEqualTo(0.25); // zero count
    assertThat(p.getDouble()).isEqualTo(7.75); // count
    assertThat(p.getDouble()).isEqualTo(-3.5); // sum
    assertThat(p.get()).isEqualTo((byte) 1); // one positive span
    assertThat(p.get()).isEqualTo((byte) 8); // offset 4, zig-zag
    assertThat(p.get()).isEqualTo((byte) 1); // length
    assertThat(p.get()).isZero(); // no negative spans
    assertThat(p.get()).isEqualTo((byte) 1); // one positive bucket
    assertThat(p.getDouble()).isEqualTo(7.5);
    assertThat(p.get()).isZero(); // no negative buckets
    assertThat(p.remaining()).isZero();
  }

  @Test
  void integerBucketsAreDeltasOnDisk() {
    ByteSink out = new ByteSink(64);
    HistogramRecords.encode(out, INT);
    byte[] b = out.toByteArray();
    // Positive buckets 3, 2, 4 are written as deltas 3, -1, 2 (zig-zag 6, 1, 4) after their count 3.
    String hex = java.util.HexFormat.of().formatHex(b);
    assertThat(hex).contains("03060104");
  }

  @Test
  void splitsRecordsAtThePayloadLimit() {
    int n = 50;
    int[] refs = new int[n];
    long[] ts = new long[n];
    NativeHistogram[] hs = new NativeHistogram[n];
    for (int i = 0; i < n; i++) {
      refs[i] = i + 1;
      ts[i] = 10L * i;
      hs[i] = INT;
    }
    ByteSink sink = new ByteSink(64);
    HistogramRecords.append(sink, refs, ts, hs, n, 200);
    List<Got> got = read(sink);
    assertThat(got).hasSize(n);
    for (int i = 0; i < n; i++) {
      assertThat(got.get(i)).isEqualTo(new Got(7, i + 1, 10L * i, INT));
    }
    ByteBuffer all = ByteBuffer.wrap(sink.toByteArray());
    int records = 0;
    for (int pos = 0; pos < all.limit(); records++) {
      int len = WalRecords.validAt(all, pos, all.limit());
      assertThat(len - WalRecords.HEADER_BYTES).isLessThanOrEqualTo(200);
      pos += len;
    }
    assertThat(records).isGreaterThan(1);
  }
}
