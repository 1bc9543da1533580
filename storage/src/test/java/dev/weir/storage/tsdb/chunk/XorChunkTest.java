package dev.weir.storage.tsdb.chunk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class XorChunkTest {
  /** Prometheus' staleness marker: a NaN with a specific payload that must survive bit-exactly. */
  static final double STALE_NAN = Double.longBitsToDouble(0x7ff0000000000002L);

  private static void assertRoundTrip(long[] ts, double[] vs) {
    XorAppender app = new XorAppender();
    for (int i = 0; i < ts.length; i++) {
      app.append(ts[i], vs[i]);
      // The count and the oldest time are read from the chunk's own bytes (no fields for them).
      assertThat(app.numSamples()).isEqualTo(i + 1);
      assertThat(app.minTime()).isEqualTo(ts[0]);
      assertThat(app.maxTime()).isEqualTo(ts[i]);
    }
    byte[] bytes = app.bytes();
    assertThat(XorIterator.numSamples(bytes)).isEqualTo(ts.length);
    XorIterator it = new XorIterator(bytes);
    for (int i = 0; i < ts.length; i++) {
      assertThat(it.next()).as("sample %d", i).isTrue();
      assertThat(it.timestamp()).as("timestamp %d", i).isEqualTo(ts[i]);
      assertThat(Double.doubleToRawLongBits(it.value()))
          .as("value bits %d (%s vs %s)", i, it.value(), vs[i])
          .isEqualTo(Double.doubleToRawLongBits(vs[i]));
    }
    assertThat(it.next()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 42, 1000})
  void roundTripsRandomSeries(long seed) {
    Random r = new Random(seed);
    for (int round = 0; round < 200; round++) {
      int n = 1 + r.nextInt(300);
      long[] ts = new long[n];
      double[] vs = new double[n];
      long t = r.nextLong() >> (1 + r.nextInt(30));
      double v = r.nextGaussian() * 1000;
      for (int i = 0; i < n; i++) {
        // Mixture of regular scrape intervals, jitter and huge jumps exercising every dod bucket.
        switch (r.nextInt(6)) {
          case 0 -> t += 15_000;
          case 1 -> t += 15_000 + r.nextInt(2000) - 1000;
          case 2 -> t += 1 + r.nextInt(1 << 16);
          case 3 -> t += 1 + r.nextInt(1 << 19);
          case 4 -> t += 1 + (r.nextLong() >>> 30);
          default -> t += 1;
        }
        switch (r.nextInt(5)) {
          case 0 -> { } // repeat the value
          case 1 -> v += 1;
          case 2 -> v = r.nextGaussian();
          case 3 -> v = Double.longBitsToDouble(r.nextLong());
          default -> v = Math.round(v * 3);
        }
        ts[i] = t;
        vs[i] = v;
      }
      assertRoundTrip(ts, vs);
    }
  }

  @Test
  void roundTripsEdgeValues() {
    double[] vs = {
      Double.NaN, STALE_NAN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0,
      Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE, 1.0, 1.0, STALE_NAN, Double.NaN,
      Double.longBitsToDouble(0xffffffffffffffffL), Double.longBitsToDouble(1L), 0.1, 0.1
    };
    long[] ts = new long[vs.length];
    for (int i = 0; i < ts.length; i++) {
      ts[i] = 1_700_000_000_000L + i * 15_000L;
    }
    assertRoundTrip(ts, vs);
  }

  @Test
  void roundTripsExtremeTimestamps() {
    assertRoundTrip(new long[] {Long.MIN_VALUE / 2, 0, Long.MAX_VALUE / 2}, new double[] {1, 2, 3});
    assertRoundTrip(new long[] {-5_000, -4_000, -1}, new double[] {1, 2, 3});
    assertRoundTrip(new long[] {0}, new double[] {42});
  }

  @Test
  void deltaOfDeltaBucketBoundariesRoundTrip() {
    // dod values exactly at and beside each bucket's limits: 2^(n-1) fits, -(2^(n-1)) does not.
    List<Long> dods = new ArrayList<>();
    for (int bits : new int[] {14, 17, 20}) {
      long lim = 1L << (bits - 1);
      dods.addAll(List.of(lim, lim + 1, -(lim - 1), -lim, -lim - 1));
    }
    long t = 1_000_000_000L;
    long delta = 10_000_000L;
    long[] ts = new long[dods.size() + 2];
    ts[0] = t;
    ts[1] = t + delta;
    for (int i = 0; i < dods.size(); i++) {
      delta += dods.get(i);
      ts[i + 2] = ts[i + 1] + delta;
    }
    double[] vs = new double[ts.length];
    assertRoundTrip(ts, vs);
    assertThat(XorAppender.bitRange(1L << 13, 14)).isTrue();
    assertThat(XorAppender.bitRange(-(1L << 13), 14)).isFalse();
  }

  @Test
  void encodesLikePrometheusForAKnownSeries() {
    // Two samples: header 0x0002, varint(zigzag(1000)) = d0 0f, 64 raw bits of 1.0,
    // uvarint delta 10 = 0a, then a 0 bit for the equal value.
    XorAppender app = new XorAppender();
    app.append(1000, 1.0);
    app.append(1010, 1.0);
    assertThat(app.bytes())
        .containsExactly(0x00, 0x02, 0xd0, 0x0f, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x0a, 0x00);
  }

  @Test
  void equalTimestampsRoundTrip() {
    // The head never appends equal timestamps, but a decoder must cope with a zero delta.
    assertRoundTrip(new long[] {5, 5, 5, 6}, new double[] {1, 2, 3, 4});
  }

  @Test
  void aChunkTakesAtMostItsTwoByteCountOfSamples() {
    XorAppender app = new XorAppender();
    for (int i = 0; i < XorChunkBase.MAX_SAMPLES; i++) {
      app.append(i * 15_000L - 7_000_000L, i % 7);
    }
    assertThat(app.numSamples()).isEqualTo(65_535);
    assertThat(app.minTime()).isEqualTo(-7_000_000L);
    assertThatThrownBy(() -> app.append(Long.MAX_VALUE / 4, 1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("at most 65535 samples");
    assertThat(app.numSamples()).as("the full chunk is intact").isEqualTo(65_535);
    XorIterator it = new XorIterator(app.bytes());
    int n = 0;
    while (it.next()) {
      assertThat(it.timestamp()).isEqualTo(n * 15_000L - 7_000_000L);
      n++;
    }
    assertThat(n).isEqualTo(65_535);
  }

  @Test
  void truncatedChunkFailsLoudly() {
    XorAppender app = new XorAppender();
    for (int i = 0; i < 10; i++) {
      app.append(i * 1000L, i * 1.5);
    }
    byte[] bytes = app.bytes();
    byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length / 2);
    XorIterator it = new XorIterator(cut);
    assertThatThrownBy(
            () -> {
              while (it.next()) {
                // drain
              }
            })
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("truncated");
  }
}
