package dev.weir.storage.tsdb.chunk;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Bytes derived by hand from Prometheus' format description ({@code histogram.go},
 * {@code histogram_meta.go}, {@code varbit.go}), pinning the parts Prometheus 2.42 in
 * {@code HistogramBlockIT} cannot check: custom bounds exist only since Prometheus 3.
 */
class HistogramChunkBytesTest {
  @Test
  void oneIntegerHistogram() {
    // count 1, flags 0 | zt 0: 0x00 | schema 0: 0 | 1 span: 10 001, length 2: 10 010, offset 0: 0 |
    // no negative spans: 0 | t=1000: 11110 + 12 bits | count 4: 10 100 | zero count 0: 0 |
    // sum 2.0: 64 bits | bucket deltas 1, 2: 10 001, 10 010 | padding.
    NativeHistogram h = new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN, 0, 0, 0, 4, 2.0,
        new int[] {0, 2}, new double[] {1, 3}, new int[0], new double[0], new double[0]);
    HistogramChunkAppender a = new HistogramChunkAppender();
    assertThat(a.append(1000, h)).isTrue();
    assertThat(a.bytes()).containsExactly(0x00, 0x01, 0x00, 0x00, 0x46, 0x47, (byte) 0x8f, (byte) 0xa2,
        (byte) 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, (byte) 0xc8);
  }

  @Test
  void customBucketsWriteTheirBoundsInTheLayout() {
    // ... schema -53: 1110 + 9 bits | spans as above | no negative spans | 2 bounds: 10 010 |
    // 0.5 → 501 as varbit uint: 1110 + 9 bits | 1e9 is too big for the compact form: 0 + 64 bits |
    // t=0: 0 | count 3: 10 011 | zero count: 0 | sum 0.0: 64 bits | deltas 1, 1: 10 001, 10 001.
    NativeHistogram h = new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN,
        NativeHistogram.CUSTOM_BUCKETS_SCHEMA, 0, 0, 3, 0.0, new int[] {0, 2}, new double[] {1, 2}, new int[0],
        new double[0], new double[] {0.5, 1e9});
    HistogramChunkAppender a = new HistogramChunkAppender();
    assertThat(a.append(0, h)).isTrue();
    byte[] want = {0x00, 0x01, 0x00, 0x00, (byte) 0xee, 0x5c, 0x64, 0x4b, (byte) 0xbe, (byte) 0xa4, 0x1c,
        (byte) 0xdc, (byte) 0xd6, 0x50, 0x00, 0x00, 0x00, 0x04, (byte) 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x11, (byte) 0x88};
    assertThat(a.bytes()).containsExactly(want);
    HistogramChunkIterator it = new HistogramChunkIterator(want);
    assertThat(it.next()).isTrue();
    assertThat(it.histogram()).isEqualTo(h);
  }

  @Test
  void zeroThresholdsTakeOneByteWhenAPowerOfTwoInRange() {
    assertThat(layoutBytes(0)).isEqualTo(1);
    assertThat(layoutBytes(0x1p-128)).isEqualTo(1);
    assertThat(layoutBytes(0x1p-243)).isEqualTo(1);
    assertThat(layoutBytes(0x1p10)).isEqualTo(1);
    assertThat(layoutBytes(0x1p11)).isEqualTo(9);
    assertThat(layoutBytes(0x1p-244)).isEqualTo(9);
    assertThat(layoutBytes(0.001)).isEqualTo(9);
    assertThat(layoutBytes(-0.5)).isEqualTo(9);
    // The default threshold 2^-128 is 0.5 * 2^-127: stored as -127 + 243 = 116.
    BitWriter w = new BitWriter(0, 8);
    HistogramLayout.writeZeroThreshold(w, 0x1p-128);
    assertThat(w.bytes()).containsExactly(116);
  }

  private static int layoutBytes(double zt) {
    BitWriter w = new BitWriter(0, 8);
    HistogramLayout.writeZeroThreshold(w, zt);
    byte[] b = w.bytes();
    BitReader r = new BitReader(b, 0);
    assertThat(HistogramLayout.readZeroThreshold(r)).isEqualTo(zt);
    return b.length;
  }
}
