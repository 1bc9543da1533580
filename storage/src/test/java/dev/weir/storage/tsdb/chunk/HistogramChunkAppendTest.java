package dev.weir.storage.tsdb.chunk;

import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_GAUGE;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_NO;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_UNKNOWN;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_YES;
import static dev.weir.storage.tsdb.chunk.RandomHistograms.STALE_NAN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.chunk.HistogramChunkTest.App;
import dev.weir.storage.tsdb.chunk.HistogramChunkTest.Decoded;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** When each appender takes a sample, when it asks for a new chunk, and what it refuses. */
class HistogramChunkAppendTest {
  private static final int[] SPANS = {-2, 3, 1, 2};
  private static final int[] NEG = {0, 1};

  /** A counter histogram: buckets {1,2,3 | 4,5}·k, negative bucket k, zero count k. */
  static NativeHistogram h(boolean isFloat, int hint, double k) {
    return new NativeHistogram(isFloat, hint, 1, 0x1p-128, k, 16 * k, 10 * k, SPANS,
        new double[] {k, 2 * k, 3 * k, 4 * k, 5 * k}, NEG, new double[] {k}, new double[0]);
  }

  static NativeHistogram with(NativeHistogram h, int schema, double zt, int[] pos, double[] custom) {
    double[] pb = new double[h.positiveBuckets().length + (pos.length > SPANS.length ? 1 : 0)];
    System.arraycopy(h.positiveBuckets(), 0, pb, 0, Math.min(pb.length, h.positiveBuckets().length));
    return new NativeHistogram(h.isFloat(), h.counterResetHint(), schema, zt, h.zeroCount(), h.count(),
        h.sum(), pos, pb, h.negativeSpans(), h.negativeBuckets(), custom);
  }

  private static App started(boolean isFloat) {
    App a = App.of(isFloat, 120);
    assertThat(a.append(1000, h(isFloat, RESET_UNKNOWN, 1))).isTrue();
    return a;
  }

  private static void assertRefused(App a, long t, NativeHistogram h, String why) {
    byte[] before = a.bytes();
    assertThat(a.append(t, h)).as(why).isFalse();
    assertThat(a.bytes()).as("nothing written when refusing: %s", why).isEqualTo(before);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void refusesAnotherBucketLayout(boolean isFloat) {
    App a = started(isFloat);
    NativeHistogram next = h(isFloat, RESET_NO, 2);
    assertRefused(a, 2000, with(next, 2, 0x1p-128, SPANS, new double[0]), "schema");
    assertRefused(a, 2000, with(next, 1, 0.001, SPANS, new double[0]), "zero threshold");
    assertRefused(a, 2000, with(next, 1, 0x1p-128, new int[] {-2, 3, 1, 2, 0, 1}, new double[0]), "new bucket");
    assertRefused(a, 2000, with(next, 1, 0x1p-128, new int[] {-1, 3, 1, 2}, new double[0]), "shifted spans");
    assertThat(a.append(2000, next)).as("same layout").isTrue();

    App c = App.of(isFloat, 120);
    NativeHistogram custom = with(h(isFloat, RESET_UNKNOWN, 1), -53, 0, SPANS, new double[] {1, 2, 3, 4, 5, 6});
    assertThat(c.append(1000, custom)).isTrue();
    assertRefused(c, 2000, with(h(isFloat, RESET_NO, 2), -53, 0, SPANS, new double[] {1, 2, 3, 4, 5, 7}),
        "other custom bounds");
    assertThat(c.append(2000, with(h(isFloat, RESET_NO, 2), -53, 0, SPANS, new double[] {1, 2, 3, 4, 5, 6})))
        .isTrue();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void refusesCounterResets(boolean isFloat) {
    App a = started(isFloat);
    assertThat(a.append(2000, h(isFloat, RESET_NO, 3))).isTrue();
    NativeHistogram next = h(isFloat, RESET_NO, 4);
    assertRefused(a, 3000, h(isFloat, RESET_YES, 4), "reset hint");
    assertRefused(a, 3000, counts(next, next.count() - 40, next.zeroCount(), 0), "count");
    assertRefused(a, 3000, counts(next, next.count(), 2, 0), "zero count");
    assertRefused(a, 3000, counts(next, next.count(), next.zeroCount(), 2), "one bucket");
    assertThat(a.append(3000, next)).isTrue();
    assertThat(a.append(4000, next)).as("no change is no reset").isTrue();
    assertThat(a.numSamples()).isEqualTo(4);
  }

  /** {@code h} with count, zero count and the third positive bucket replaced (0 keeps it). */
  private static NativeHistogram counts(NativeHistogram h, double count, double zc, double bucket2) {
    double[] pb = h.positiveBuckets().clone();
    if (bucket2 != 0) {
      pb[2] = bucket2;
    }
    return new NativeHistogram(h.isFloat(), h.counterResetHint(), h.schema(), h.zeroThreshold(), zc, count,
        h.sum(), h.positiveSpans(), pb, h.negativeSpans(), h.negativeBuckets(), h.customValues());
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void gaugesGoBothWaysButNeverMixWithCounters(boolean isFloat) {
    App g = App.of(isFloat, 120);
    assertThat(g.append(1000, h(isFloat, RESET_GAUGE, 5))).isTrue();
    assertThat(g.append(2000, h(isFloat, RESET_GAUGE, 1))).as("a gauge may fall").isTrue();
    assertThat(g.append(3000, h(isFloat, RESET_GAUGE, 7))).isTrue();
    assertRefused(g, 4000, h(isFloat, RESET_NO, 8), "a counter after gauges");
    assertRefused(g, 4000, h(isFloat, RESET_UNKNOWN, 8), "an unknown hint after gauges");
    List<Decoded> d = HistogramChunkTest.decode(isFloat, g.bytes());
    assertThat(d).extracting(x -> x.h().counterResetHint()).containsOnly(RESET_GAUGE);
    assertThat(d).extracting(Decoded::header).containsOnly(Chunks.HEADER_GAUGE);
    assertThat(d).extracting(x -> x.h().count()).containsExactly(80.0, 16.0, 112.0);

    App c = started(isFloat);
    assertRefused(c, 2000, h(isFloat, RESET_GAUGE, 2), "a gauge after counters");
  }

  @ParameterizedTest
  @ValueSource(ints = {RESET_UNKNOWN, RESET_NO, RESET_YES, RESET_GAUGE})
  void firstSampleSetsTheCounterResetHeader(int hint) {
    int want = switch (hint) {
      case RESET_YES -> Chunks.HEADER_RESET;
      case RESET_GAUGE -> Chunks.HEADER_GAUGE;
      default -> Chunks.HEADER_UNKNOWN;
    };
    for (boolean isFloat : new boolean[] {false, true}) {
      App a = App.of(isFloat, 120);
      assertThat(a.append(1000, h(isFloat, hint, 1))).isTrue();
      byte[] b = a.bytes();
      assertThat(b[2] & 0xff).as("flag byte, float=%s", isFloat).isEqualTo(want);
      assertThat(HistogramChunkTest.decode(isFloat, b).get(0).header()).isEqualTo(want);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void headerCanBeSetForAChunkCutWithoutAReset(boolean isFloat) {
    HistogramChunkAppender ia = new HistogramChunkAppender();
    FloatHistogramChunkAppender fa = new FloatHistogramChunkAppender();
    if (isFloat) {
      fa.append(1, h(true, RESET_UNKNOWN, 1));
      fa.setCounterResetHeader(Chunks.HEADER_NOT_RESET);
      assertThat(new FloatHistogramChunkIterator(fa.bytes()).counterResetHeader()).isEqualTo(Chunks.HEADER_NOT_RESET);
      fa.append(2, h(true, RESET_UNKNOWN, 2));
      assertThatThrownBy(() -> fa.setCounterResetHeader(Chunks.HEADER_RESET)).isInstanceOf(IllegalStateException.class);
    } else {
      ia.append(1, h(false, RESET_UNKNOWN, 1));
      ia.setCounterResetHeader(Chunks.HEADER_NOT_RESET);
      assertThat(new HistogramChunkIterator(ia.bytes()).counterResetHeader()).isEqualTo(Chunks.HEADER_NOT_RESET);
      ia.append(2, h(false, RESET_UNKNOWN, 2));
      assertThatThrownBy(() -> ia.setCounterResetHeader(Chunks.HEADER_RESET)).isInstanceOf(IllegalStateException.class);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void staleMarkersRoundTripAndOnlyStaleMarkersFollowThem(boolean isFloat) {
    RandomHistograms gen = new RandomHistograms(new java.util.Random(1), isFloat);
    App a = started(isFloat);
    assertThat(a.append(2000, gen.stale())).isTrue();
    assertThat(a.append(3000, gen.stale())).isTrue();
    assertRefused(a, 4000, h(isFloat, RESET_UNKNOWN, 2), "a sample after a stale marker");
    List<Decoded> d = HistogramChunkTest.decode(isFloat, a.bytes());
    assertThat(d).hasSize(3);
    assertThat(Double.doubleToRawLongBits(d.get(1).h().sum())).isEqualTo(Chunks.STALE_NAN_BITS);
    assertThat(Double.doubleToRawLongBits(d.get(2).h().sum())).isEqualTo(Chunks.STALE_NAN_BITS);
    assertThat(d.get(2).h().bucketCount()).isZero();

    App s = App.of(isFloat, 120);
    assertThat(s.append(1000, gen.stale())).as("a chunk may start stale").isTrue();
    assertRefused(s, 2000, h(isFloat, RESET_UNKNOWN, 1), "a sample after a stale first sample");
    NativeHistogram back = HistogramChunkTest.decode(isFloat, s.bytes()).get(0).h();
    assertThat(Double.doubleToRawLongBits(back.sum())).isEqualTo(Double.doubleToRawLongBits(STALE_NAN));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aFullChunkTakesNoMore(boolean isFloat) {
    App a = App.of(isFloat, 5);
    for (int i = 1; i <= 5; i++) {
      assertThat(a.append(i, h(isFloat, RESET_UNKNOWN, i))).isTrue();
    }
    assertRefused(a, 6, h(isFloat, RESET_UNKNOWN, 6), "max samples");

    // Wide histograms: the chunk passes 1 KiB long before 120 samples, but keeps at least 10.
    App wide = App.of(isFloat, 120);
    int taken = 0;
    while (wide.append(taken + 1L, wideHistogram(isFloat, taken + 1))) {
      taken++;
    }
    assertThat(taken).isBetween(Chunks.MIN_HISTOGRAM_SAMPLES, 119);
    assertThat(wide.bytes().length).isGreaterThanOrEqualTo(Chunks.TARGET_HISTOGRAM_CHUNK_BYTES);
  }

  private static NativeHistogram wideHistogram(boolean isFloat, int k) {
    double[] b = new double[200];
    double count = 0;
    for (int i = 0; i < b.length; i++) {
      b[i] = (double) k * k * (i + 1) * 7919 % 100_003 + k * 100_003.0;
      count += b[i];
    }
    return new NativeHistogram(isFloat, RESET_UNKNOWN, 3, 0, 0, count, k * 1.1, new int[] {0, 200}, b,
        new int[0], new double[0], new double[0]);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void bytesTakenMidAppendStayReadable(boolean isFloat) {
    App a = App.of(isFloat, 120);
    byte[] atThree = null;
    for (int i = 1; i <= 50; i++) {
      assertThat(a.append(i * 1000L, h(isFloat, RESET_UNKNOWN, i))).isTrue();
      if (i == 3) {
        atThree = a.bytes();
      }
    }
    List<Decoded> early = HistogramChunkTest.decode(isFloat, atThree);
    assertThat(early).extracting(Decoded::t).containsExactly(1000L, 2000L, 3000L);
    assertThat(early.get(2).h().count()).isEqualTo(48);
    assertThat(HistogramChunkTest.decode(isFloat, a.bytes())).hasSize(50);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void badInputIsRefusedWithAReason(boolean isFloat) {
    App a = App.of(isFloat, 120);
    NativeHistogram badSpans = new NativeHistogram(isFloat, RESET_UNKNOWN, 1, 0, 0, 3, 1, new int[] {0, 3},
        new double[] {1, 2}, new int[0], new double[0], new double[0]);
    assertThatThrownBy(() -> a.append(1, badSpans)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive spans need 3 buckets but there are 2");
    NativeHistogram badSchema = new NativeHistogram(isFloat, RESET_UNKNOWN, 9, 0, 0, 0, 1, new int[0],
        new double[0], new int[0], new double[0], new double[0]);
    assertThatThrownBy(() -> a.append(1, badSchema)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("schema 9");
    assertThat(a.numSamples()).isZero();
  }

  @org.junit.jupiter.api.Test
  void integerChunksRefuseFloatHistogramsAndFloatChunksConvertIntegerOnes() {
    assertThatThrownBy(() -> new HistogramChunkAppender().append(1, h(true, RESET_UNKNOWN, 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("float histogram chunk");
    FloatHistogramChunkAppender f = new FloatHistogramChunkAppender();
    assertThat(f.append(1, h(false, RESET_UNKNOWN, 3))).isTrue();
    FloatHistogramChunkIterator it = new FloatHistogramChunkIterator(f.bytes());
    assertThat(it.next()).isTrue();
    assertThat(it.histogram()).isEqualTo(h(true, RESET_UNKNOWN, 3));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aTruncatedChunkFailsToDecode(boolean isFloat) {
    App a = started(isFloat);
    a.append(2000, h(isFloat, RESET_UNKNOWN, 2));
    byte[] full = a.bytes();
    byte[] cut = java.util.Arrays.copyOf(full, full.length - 4);
    assertThatThrownBy(() -> HistogramChunkTest.decode(isFloat, cut)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("truncated");
    assertThatThrownBy(() -> HistogramChunkTest.decode(isFloat, new byte[2]))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("header");
    assertThat(Chunks.numSamples(isFloat ? Chunks.FLOAT_HISTOGRAM : Chunks.HISTOGRAM, full)).isEqualTo(2);
  }
}
