package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.FloatHistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.HistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus reads Weir's histogram chunks: a block written by {@link BlockWriter} with integer and
 * float histogram series (counters and gauges, schemas -4..8, several chunks each, a bucket layout
 * change and a counter reset) and a float series is opened by Debian's Prometheus 2.42, whose HTTP
 * API must return every sample as written and compute {@code histogram_count},
 * {@code histogram_sum} and {@code histogram_quantile} as this test does from the input.
 *
 * <p>Custom-bucket histograms (schema -53) and stale markers are left out: Prometheus 2.42 predates
 * custom buckets, and a stale sample ends a series in query results rather than showing it; both
 * are covered by the chunk round-trip tests.
 */
class HistogramBlockIT {
  /** A 2-hour-aligned block start (2023-11-15). */
  private static final long BASE = 1_700_006_400_000L;
  private static final long BLOCK = 7_200_000L;
  private static final long STEP = 15_000L;
  private static final int SAMPLES = 300;
  private static final int LAYOUT_CHANGE_AT = 100;
  private static final int RESET_AT = 200;

  @TempDir Path dir;

  record Spec(Labels labels, boolean isFloat, int schema, double zeroThreshold, boolean gauge) {}

  record Series(Spec spec, List<NativeHistogram> samples, List<ChunkData> chunks) {}

  @Test
  void prometheusReadsHistogramChunksFromAWeirBlock() throws Exception {
    List<Spec> specs = List.of(
        new Spec(Labels.of("__name__", "weir_hist", "kind", "int", "schema", "3"), false, 3, 0x1p-128, false),
        new Spec(Labels.of("__name__", "weir_hist", "kind", "int", "schema", "-4"), false, -4, 0.001, false),
        new Spec(Labels.of("__name__", "weir_hist", "kind", "int_gauge", "schema", "8"), false, 8, 0x1p-10, true),
        new Spec(Labels.of("__name__", "weir_hist", "kind", "float", "schema", "0"), true, 0, 0x1p-128, false),
        new Spec(Labels.of("__name__", "weir_hist", "kind", "float_gauge", "schema", "-2"), true, -2, 0.5, true));
    Random r = new Random(42);
    List<Series> hists = new ArrayList<>();
    List<SeriesChunks> blockSeries = new ArrayList<>();
    for (Spec s : specs) {
      List<NativeHistogram> samples = generate(s, r);
      List<ChunkData> chunks = encode(s.isFloat(), samples);
      assertThat(chunks).as("chunks of %s", s.labels()).hasSizeGreaterThanOrEqualTo(4);
      hists.add(new Series(s, samples, chunks));
      blockSeries.add(new SeriesChunks(s.labels(), chunks));
    }
    double[] floats = new double[SAMPLES];
    List<ChunkData> xorChunks = new ArrayList<>();
    for (int from = 0; from < SAMPLES; from += 120) {
      XorAppender a = new XorAppender();
      for (int i = from; i < Math.min(SAMPLES, from + 120); i++) {
        floats[i] = i == 0 ? 1 : floats[i - 1] + r.nextInt(50) / 4.0;
        a.append(BASE + i * STEP, floats[i]);
      }
      xorChunks.add(new ChunkData(a.minTime(), a.maxTime(), a.bytes()));
    }
    Labels xorLabels = Labels.of("__name__", "weir_float");
    blockSeries.add(new SeriesChunks(xorLabels, xorChunks));
    blockSeries.sort(Comparator.comparing(SeriesChunks::labels));

    Path data = dir.resolve("prom/data");
    BlockMeta meta = BlockWriter.write(data, Ulid.random(BASE), BASE, BASE + BLOCK, blockSeries, "");
    assertThat(meta.numSamples()).isEqualTo(6L * SAMPLES);
    Files.createDirectories(data.resolve("wal"));
    String analyze = Promtool.run(dir, Promtool.PROMTOOL, "tsdb", "analyze", "--extended", data.toString());
    assertThat(analyze).contains("Series: 6");

    try (PrometheusProcess prom = PrometheusProcess.start(dir.resolve("prom"), PrometheusProcess.reservePort(),
        "global:\n  scrape_interval: 15s\n", "--enable-feature=native-histograms",
        "--storage.tsdb.retention.time=100y")) {
      long end = BASE + (SAMPLES - 1) * STEP;
      for (Series s : hists) {
        String sel = selector(s.spec().labels());
        assertRawSamples(prom.queryRange(sel, BASE, end, Duration.ofMillis(STEP)), s);
        double[] count = new double[SAMPLES];
        double[] sum = new double[SAMPLES];
        double[] q90 = new double[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
          NativeHistogram h = s.samples().get(i);
          count[i] = h.count();
          sum[i] = h.sum();
          q90[i] = quantile(0.9, h);
        }
        assertFloats(prom.queryRange("histogram_count(" + sel + ")", BASE, end, Duration.ofMillis(STEP)),
            count, 0, "histogram_count " + sel);
        assertFloats(prom.queryRange("histogram_sum(" + sel + ")", BASE, end, Duration.ofMillis(STEP)),
            sum, 0, "histogram_sum " + sel);
        assertFloats(prom.queryRange("histogram_quantile(0.9, " + sel + ")", BASE, end, Duration.ofMillis(STEP)),
            q90, 1e-9, "histogram_quantile " + sel);
      }
      assertFloats(prom.queryRange("weir_float", BASE, end, Duration.ofMillis(STEP)), floats, 0, "weir_float");
    }
  }

  private static String selector(Labels l) {
    return "weir_hist{kind=\"" + l.get("kind") + "\",schema=\"" + l.get("schema") + "\"}";
  }

  /** Counts grow by whole or fractional steps (gauges also shrink); new buckets at one point, a reset at another. */
  private static List<NativeHistogram> generate(Spec s, Random r) {
    // Every bucket lies beyond the zero threshold (Prometheus clamps bounds that reach into it).
    int first = s.schema() >= 0 ? -3 : 1;
    int[] posA = {first, 3, 2, 2};
    int[] posB = {first, 3, 2, 2, 1, 2};
    int[] neg = {1, 2};
    double[] pos = new double[7];
    double[] negCounts = new double[2];
    double zc = 0;
    double sum = 0;
    List<NativeHistogram> out = new ArrayList<>();
    for (int i = 0; i < SAMPLES; i++) {
      int nPos = i < LAYOUT_CHANGE_AT ? 5 : 7;
      if (i == RESET_AT && !s.gauge()) {
        java.util.Arrays.fill(pos, 0);
        java.util.Arrays.fill(negCounts, 0);
        zc = 0;
        sum = 0;
      }
      for (int b = 0; b < nPos; b++) {
        pos[b] = step(pos[b], s, r);
      }
      for (int b = 0; b < negCounts.length; b++) {
        negCounts[b] = step(negCounts[b], s, r);
      }
      pos[0] += 1; // every sample differs from the one before, so a lost sample cannot hide
      zc = step(zc, s, r);
      sum += r.nextGaussian() * 100;
      double count = zc + negCounts[0] + negCounts[1];
      for (int b = 0; b < nPos; b++) {
        count += pos[b];
      }
      out.add(new NativeHistogram(s.isFloat(), s.gauge() ? NativeHistogram.RESET_GAUGE : NativeHistogram.RESET_UNKNOWN,
          s.schema(), s.zeroThreshold(), zc, count, sum, i < LAYOUT_CHANGE_AT ? posA : posB,
          java.util.Arrays.copyOf(pos, nPos), neg, negCounts.clone(), new double[0]));
    }
    return out;
  }

  private static double step(double v, Spec s, Random r) {
    double d = s.isFloat() ? r.nextInt(1000) / 64.0 : r.nextInt(6);
    if (s.gauge() && r.nextBoolean()) {
      return Math.max(0, v - d);
    }
    return v + d;
  }

  /** Chunks as a head would cut them: a new one whenever the appender refuses a sample. */
  private static List<ChunkData> encode(boolean isFloat, List<NativeHistogram> samples) {
    List<ChunkData> out = new ArrayList<>();
    Object app = null;
    for (int i = 0; i < samples.size(); i++) {
      long t = BASE + i * STEP;
      if (app == null || !append(app, t, samples.get(i))) {
        if (app != null) {
          out.add(chunk(app));
        }
        app = isFloat ? new FloatHistogramChunkAppender() : new HistogramChunkAppender();
        assertThat(append(app, t, samples.get(i))).isTrue();
      }
    }
    out.add(chunk(app));
    return out;
  }

  private static boolean append(Object app, long t, NativeHistogram h) {
    return app instanceof HistogramChunkAppender a ? a.append(t, h) : ((FloatHistogramChunkAppender) app).append(t, h);
  }

  private static ChunkData chunk(Object app) {
    if (app instanceof HistogramChunkAppender a) {
      return new ChunkData(a.minTime(), a.maxTime(), a.bytes(), Chunks.HISTOGRAM);
    }
    FloatHistogramChunkAppender a = (FloatHistogramChunkAppender) app;
    return new ChunkData(a.minTime(), a.maxTime(), a.bytes(), Chunks.FLOAT_HISTOGRAM);
  }

  /** One bucket as Prometheus' JSON shows it: boundary rule, lower, upper, count. */
  record Bucket(int rule, double lower, double upper, double count) {}

  /** Upper bound of exponential bucket {@code idx}: 2^(idx * 2^-schema), computed independently. */
  private static double upper(int schema, int idx) {
    return Math.pow(2, idx * Math.pow(2, -schema));
  }

  /** Non-empty buckets in ascending order, the way Prometheus' bucket iterator yields them. */
  static List<Bucket> buckets(NativeHistogram h) {
    List<Bucket> out = new ArrayList<>();
    List<int[]> negIdx = indexes(h.negativeSpans());
    for (int i = 0; i < negIdx.size(); i++) {
      int idx = negIdx.get(i)[0];
      out.add(new Bucket(1, -upper(h.schema(), idx), -upper(h.schema(), idx - 1), h.negativeBuckets()[i]));
    }
    out.add(new Bucket(3, -h.zeroThreshold(), h.zeroThreshold(), h.zeroCount()));
    List<int[]> posIdx = indexes(h.positiveSpans());
    for (int i = 0; i < posIdx.size(); i++) {
      int idx = posIdx.get(i)[0];
      out.add(new Bucket(0, upper(h.schema(), idx - 1), upper(h.schema(), idx), h.positiveBuckets()[i]));
    }
    out.sort(Comparator.comparingDouble(Bucket::lower));
    return out;
  }

  private static List<int[]> indexes(int[] spans) {
    List<int[]> out = new ArrayList<>();
    int idx = 0;
    for (int s = 0; s < spans.length; s += 2) {
      idx += spans[s];
      for (int k = 0; k < spans[s + 1]; k++) {
        out.add(new int[] {idx++});
      }
    }
    return out;
  }

  /** Prometheus 2.42's histogram_quantile: linear interpolation inside the bucket holding the rank. */
  static double quantile(double q, NativeHistogram h) {
    if (h.count() == 0) {
      return Double.NaN;
    }
    double rank = q * h.count();
    double count = 0;
    Bucket bucket = null;
    for (Bucket b : buckets(h)) {
      bucket = b;
      count += b.count();
      if (count >= rank) {
        break;
      }
    }
    double lower = bucket.lower();
    double upper = bucket.upper();
    if (lower < 0 && upper > 0) {
      if (h.negativeBuckets().length == 0 && h.positiveBuckets().length > 0) {
        lower = 0;
      } else if (h.positiveBuckets().length == 0 && h.negativeBuckets().length > 0) {
        upper = 0;
      }
    }
    count = Math.min(count, h.count());
    if (count < rank) {
      return upper;
    }
    rank -= count - bucket.count();
    return lower + (upper - lower) * (rank / bucket.count());
  }

  private static void assertRawSamples(JsonNode response, Series s) {
    JsonNode result = response.path("data").path("result");
    assertThat(result).as("series %s", s.spec().labels()).hasSize(1);
    JsonNode points = result.get(0).path("histograms");
    assertThat(points).as("histogram points of %s", s.spec().labels()).hasSize(SAMPLES);
    for (int i = 0; i < SAMPLES; i++) {
      NativeHistogram want = s.samples().get(i);
      JsonNode p = points.get(i);
      String what = s.spec().labels() + " sample " + i;
      assertThat(Math.round(p.get(0).asDouble() * 1000)).as("timestamp of %s", what).isEqualTo(BASE + i * STEP);
      JsonNode h = p.get(1);
      assertThat(parse(h.path("count").asText())).as("count of %s", what).isEqualTo(want.count());
      assertThat(parse(h.path("sum").asText())).as("sum of %s", what).isEqualTo(want.sum());
      List<Bucket> wantBuckets = buckets(want).stream().filter(b -> b.count() != 0).toList();
      JsonNode got = h.path("buckets");
      assertThat(got).as("buckets of %s", what).hasSize(wantBuckets.size());
      for (int b = 0; b < wantBuckets.size(); b++) {
        Bucket w = wantBuckets.get(b);
        JsonNode g = got.get(b);
        assertThat(g.get(0).asInt()).as("boundary rule of bucket %d of %s", b, what).isEqualTo(w.rule());
        assertThat(parse(g.get(1).asText())).as("lower of bucket %d of %s", b, what)
            .isCloseTo(w.lower(), within(Math.abs(w.lower()) * 1e-12));
        assertThat(parse(g.get(2).asText())).as("upper of bucket %d of %s", b, what)
            .isCloseTo(w.upper(), within(Math.abs(w.upper()) * 1e-12));
        assertThat(parse(g.get(3).asText())).as("count of bucket %d of %s", b, what).isEqualTo(w.count());
      }
    }
  }

  private static void assertFloats(JsonNode response, double[] want, double relTolerance, String what) {
    JsonNode result = response.path("data").path("result");
    assertThat(result).as(what).hasSize(1);
    JsonNode values = result.get(0).path("values");
    assertThat(values).as("points of %s", what).hasSize(want.length);
    for (int i = 0; i < want.length; i++) {
      JsonNode p = values.get(i);
      assertThat(Math.round(p.get(0).asDouble() * 1000)).as("timestamp %d of %s", i, what).isEqualTo(BASE + i * STEP);
      double got = parse(p.get(1).asText());
      if (relTolerance == 0) {
        assertThat(got).as("point %d of %s", i, what).isEqualTo(want[i]);
      } else {
        assertThat(got).as("point %d of %s", i, what).isCloseTo(want[i], within(Math.abs(want[i]) * relTolerance));
      }
    }
  }

  private static double parse(String s) {
    return switch (s) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(s);
    };
  }
}
