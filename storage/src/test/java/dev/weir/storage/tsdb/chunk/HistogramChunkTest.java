package dev.weir.storage.tsdb.chunk;

import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_GAUGE;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_NO;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_UNKNOWN;
import static dev.weir.storage.tsdb.chunk.NativeHistogram.RESET_YES;
import static dev.weir.storage.tsdb.chunk.RandomHistograms.STALE_NAN;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BiPredicate;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Round trips of both histogram encodings through appender and iterator. */
class HistogramChunkTest {

  /** One appender of either encoding, so every test runs against both. */
  record App(BiPredicate<Long, NativeHistogram> appender, Supplier<byte[]> bytesOf, IntSupplier count) {
    boolean append(long t, NativeHistogram h) {
      return appender.test(t, h);
    }

    byte[] bytes() {
      return bytesOf.get();
    }

    int numSamples() {
      return count.getAsInt();
    }

    static App of(boolean isFloat, int maxSamples) {
      if (isFloat) {
        FloatHistogramChunkAppender a = new FloatHistogramChunkAppender(maxSamples);
        return new App(a::append, a::bytes, a::numSamples);
      }
      HistogramChunkAppender a = new HistogramChunkAppender(maxSamples);
      return new App(a::append, a::bytes, a::numSamples);
    }
  }

  record Decoded(long t, NativeHistogram h, int indexInChunk, int header) {}

  static List<Decoded> decode(boolean isFloat, byte[] chunk) {
    List<Decoded> out = new ArrayList<>();
    if (isFloat) {
      FloatHistogramChunkIterator it = new FloatHistogramChunkIterator(chunk);
      while (it.next()) {
        out.add(new Decoded(it.timestamp(), it.histogram(), out.size(), it.counterResetHeader()));
      }
    } else {
      HistogramChunkIterator it = new HistogramChunkIterator(chunk);
      while (it.next()) {
        out.add(new Decoded(it.timestamp(), it.histogram(), out.size(), it.counterResetHeader()));
      }
    }
    return out;
  }

  /** What the iterator gives back for {@code in}: the same counts, the hint Prometheus derives. */
  static NativeHistogram expected(NativeHistogram in, boolean isFloat, int indexInChunk) {
    if (Chunks.isStale(in)) {
      return new NativeHistogram(isFloat, RESET_UNKNOWN, 0, 0, 0, 0, in.sum(), new int[0],
          new double[0], new int[0], new double[0], new double[0]);
    }
    int hint = in.counterResetHint() == RESET_GAUGE ? RESET_GAUGE
        : indexInChunk == 0 ? RESET_UNKNOWN : RESET_NO;
    return new NativeHistogram(isFloat, hint, in.schema(), in.zeroThreshold(), in.zeroCount(),
        in.count(), in.sum(), in.positiveSpans(), in.positiveBuckets(), in.negativeSpans(),
        in.negativeBuckets(), in.customValues());
  }

  static void assertSame(Decoded d, long t, NativeHistogram expected, String what) {
    assertThat(d.t()).as("timestamp of %s", what).isEqualTo(t);
    assertThat(d.h()).as(what).isEqualTo(expected);
    // equals() folds every NaN into one; a stale marker must keep its payload.
    assertThat(Double.doubleToRawLongBits(d.h().sum())).as("sum bits of %s", what)
        .isEqualTo(Double.doubleToRawLongBits(expected.sum()));
  }

  @ParameterizedTest
  @CsvSource({"false,1", "false,2", "false,3", "true,1", "true,2", "true,3"})
  void roundTripsRandomSeriesAcrossChunkCuts(boolean isFloat, long seed) {
    Random r = new Random(seed);
    RandomHistograms gen = new RandomHistograms(r, isFloat);
    List<Long> ts = new ArrayList<>();
    List<NativeHistogram> in = new ArrayList<>();
    boolean gauge = false;
    NativeHistogram prev = gen.first(RESET_UNKNOWN);
    long t = r.nextLong() >> 20;
    for (int i = 0; i < 4000; i++) {
      int event = r.nextInt(100);
      NativeHistogram h;
      if (event < 3) {
        gauge = r.nextInt(4) == 0;
        h = gen.first(gauge ? RESET_GAUGE : r.nextBoolean() ? RESET_YES : RESET_UNKNOWN);
      } else if (event < 6 && !gauge) {
        h = gen.reset(prev);
      } else if (event < 8) {
        h = gen.stale();
      } else if (Chunks.isStale(prev)) {
        h = gen.first(gauge ? RESET_GAUGE : RESET_UNKNOWN);
      } else {
        h = gen.next(prev, gauge ? RESET_GAUGE : r.nextBoolean() ? RESET_NO : RESET_UNKNOWN);
      }
      t += switch (r.nextInt(4)) {
        case 0 -> 15_000;
        case 1 -> 1 + r.nextInt(100_000);
        case 2 -> 1 + (r.nextLong() >>> 28);
        default -> 1;
      };
      ts.add(t);
      in.add(h);
      prev = h;
    }

    List<byte[]> chunks = new ArrayList<>();
    App app = App.of(isFloat, 120);
    for (int i = 0; i < in.size(); i++) {
      if (!app.append(ts.get(i), in.get(i))) {
        chunks.add(app.bytes());
        app = App.of(isFloat, 120);
        assertThat(app.append(ts.get(i), in.get(i))).as("first sample of a chunk").isTrue();
      }
    }
    chunks.add(app.bytes());

    int i = 0;
    for (byte[] chunk : chunks) {
      for (Decoded d : decode(isFloat, chunk)) {
        assertSame(d, ts.get(i), expected(in.get(i), isFloat, d.indexInChunk()), "sample " + i);
        i++;
      }
    }
    assertThat(i).isEqualTo(in.size());
    assertThat(chunks.size()).as("layout changes, resets and stale markers cut chunks")
        .isGreaterThan(in.size() / 120);
  }
}
