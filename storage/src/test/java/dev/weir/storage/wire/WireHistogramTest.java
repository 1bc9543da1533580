package dev.weir.storage.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.BucketSpan;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.writev2.Request;
import dev.weir.storage.testing.Rw2Requests;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Native histograms of remote write 1.0 and 2.0 bodies, built with the protobuf classes, decoded into {@link NativeHistogram}. */
class WireHistogramTest {
  private static Histogram.Builder intHistogram(long t) {
    // Zero count 2 + positive 3, 4, 2 + negative 3: a count of 14.
    return Histogram.newBuilder().setCountInt(14).setSum(17.25).setSchema(2).setZeroThreshold(0.001)
        .setZeroCountInt(2).addPositiveSpans(BucketSpan.newBuilder().setOffset(-1).setLength(2))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(2).setLength(1)).addPositiveDeltas(3)
        .addPositiveDeltas(1).addPositiveDeltas(-2).addNegativeSpans(BucketSpan.newBuilder().setOffset(0).setLength(1))
        .addNegativeDeltas(3).setResetHint(Histogram.ResetHint.NO).setTimestamp(t);
  }

  private static byte[] rw1(Histogram... hs) {
    TimeSeries.Builder ts = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("latency_seconds"))
        .addSamples(Sample.newBuilder().setTimestamp(5).setValue(1.5));
    for (Histogram h : hs) {
      ts.addHistograms(h);
    }
    return WriteRequest.newBuilder().addTimeseries(ts).build().toByteArray();
  }

  @Test
  void decodesIntegerHistogramOfRemoteWrite1IntoAbsoluteCounts() {
    WireBatch b = WireBatch.parse(rw1(intHistogram(1_000).build()), new WireSeries());
    WireSeries ws = b.read(0, new WireSeries());
    assertThat(ws.samples()).isEqualTo(1);
    assertThat(ws.value(0)).isEqualTo(1.5);
    assertThat(ws.histograms()).isEqualTo(1);
    assertThat(ws.histogramProblem(0)).isNull();
    assertThat(ws.histogramTimestamp(0)).isEqualTo(1_000);
    NativeHistogram h = ws.histogram(0);
    assertThat(h).isEqualTo(new NativeHistogram(false, NativeHistogram.RESET_NO, 2, 0.001, 2, 14, 17.25,
        new int[] {-1, 2, 2, 1}, new double[] {3, 4, 2}, new int[] {0, 1}, new double[] {3}, new double[0]));
    assertThat(h.checkLayout()).isNull();
  }

  @Test
  void decodesFloatHistogramWithCustomBuckets() {
    Histogram fh = Histogram.newBuilder().setCountFloat(6.5).setSum(3.25).setSchema(-53).setZeroCountFloat(0)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(2)).addPositiveCounts(2.5)
        .addPositiveCounts(4).addCustomValues(0.1).addCustomValues(1).setResetHint(Histogram.ResetHint.GAUGE)
        .setTimestamp(7).build();
    WireSeries ws = WireBatch.parse(rw1(fh), new WireSeries()).read(0, new WireSeries());
    assertThat(ws.histogramProblem(0)).isNull();
    assertThat(ws.histogram(0)).isEqualTo(new NativeHistogram(true, NativeHistogram.RESET_GAUGE, -53, 0, 0, 6.5,
        3.25, new int[] {0, 2}, new double[] {2.5, 4}, new int[0], new double[0], new double[] {0.1, 1}));
  }

  @Test
  void reportsInconsistentHistogramsOfRemoteWrite1ByReason() {
    Histogram spans = intHistogram(1).addPositiveDeltas(1).build(); // 4 deltas for 3 span buckets
    Histogram negative = intHistogram(2).setPositiveDeltas(2, -5).build(); // 3, 4, -1
    Histogram schema = intHistogram(3).setSchema(53).build(); // 9..52 are lowered to 8, 53 is unknown
    WireSeries ws = WireBatch.parse(rw1(spans, negative, schema, intHistogram(4).build()), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histograms()).isEqualTo(4);
    assertThat(ws.histogramProblem(0).reason()).isEqualTo("native_histogram_span_bucket_mismatch");
    assertThat(ws.histogramProblem(1).reason()).isEqualTo("native_histogram_negative_count");
    assertThat(ws.histogramProblem(2).reason()).isEqualTo("invalid_native_histogram_schema");
    assertThat(ws.histogramProblem(2).getMessage()).contains("schema 53");
    assertThat(ws.histogramProblem(3)).isNull();
  }

  @Test
  void refusesAnIntegerCountThatDisagreesWithTheBucketsAsPrometheusDoes() {
    // intHistogram has 14 observations in its buckets (zero bucket included).
    Histogram tooSmall = intHistogram(1).setCountInt(13).build();
    Histogram tooBig = intHistogram(2).setCountInt(15).build();
    Histogram nanTooSmall = intHistogram(3).setCountInt(13).setSum(Double.NaN).build();
    Histogram nanBigger = intHistogram(4).setCountInt(15).setSum(Double.NaN).build(); // a NaN observation
    Histogram zeroCountShort = intHistogram(5).setZeroCountInt(3).build(); // 15 in buckets, count 14
    WireSeries ws = WireBatch.parse(rw1(tooSmall, tooBig, nanTooSmall, nanBigger, zeroCountShort), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histogramProblem(0).reason()).isEqualTo("native_histogram_count_mismatch");
    assertThat(ws.histogramProblem(0).getMessage()).contains("14 observations in its buckets but a count of 13");
    assertThat(ws.histogramProblem(1).reason()).isEqualTo("native_histogram_count_mismatch");
    assertThat(ws.histogramProblem(2).reason()).isEqualTo("native_histogram_count_not_big_enough");
    assertThat(ws.histogramProblem(2).getMessage()).contains("14 observations in its buckets but a count of 13");
    assertThat(ws.histogramProblem(3)).isNull();
    assertThat(ws.histogram(3).count()).isEqualTo(15);
    assertThat(ws.histogramProblem(4).reason()).isEqualTo("native_histogram_count_mismatch");
    // Read back from a store (the querier), a histogram stored before the rule is still read;
    // the other checks still hold.
    assertThat(HistogramProtos.fromProto(tooSmall).problem().reason()).isEqualTo("native_histogram_count_mismatch");
    assertThat(HistogramProtos.fromStored(tooSmall).histogram().count()).isEqualTo(13);
    assertThat(HistogramProtos.fromStored(intHistogram(6).setCountInt(13).addPositiveDeltas(1).build()).problem()
        .reason()).isEqualTo("native_histogram_span_bucket_mismatch");
  }

  @Test
  void acceptsAFloatCountThatDisagreesWithTheBucketsAsPrometheusDoes() {
    // FloatHistogram.Validate does not compare the count: rounding would make good data fail.
    Histogram fh = Histogram.newBuilder().setCountFloat(1).setSum(3).setSchema(0)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(2)).addPositiveCounts(2.5)
        .addPositiveCounts(4).setTimestamp(7).build();
    WireSeries ws = WireBatch.parse(rw1(fh), new WireSeries()).read(0, new WireSeries());
    assertThat(ws.histogramProblem(0)).isNull();
    assertThat(ws.histogram(0).count()).isEqualTo(1);
  }

  @Test
  void checksTheCountOfCustomBucketIntegerHistogramsToo() {
    Histogram.Builder nhcb = Histogram.newBuilder().setCountInt(3).setSum(1).setSchema(-53)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(2)).addPositiveDeltas(1).addPositiveDeltas(1)
        .addCustomValues(0.5);
    WireSeries ws = WireBatch.parse(rw1(nhcb.build(), nhcb.clone().setCountInt(4).build()), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histogramProblem(0)).isNull();
    assertThat(ws.histogramProblem(1).reason()).isEqualTo("native_histogram_count_mismatch");
  }

  /**
   * Schema 12 at bucket indexes 1, 2, 3, 17, 18, 40 (positive) and -16, -15, 1 (negative): at
   * schema 8 index i becomes ((i - 1) >> 4) + 1, so positive 1..3 -> 1, 17..18 -> 2, 40 -> 3 and
   * negative -16 -> -1, -15 -> 0, 1 -> 1.
   */
  static Histogram.Builder schema12(long t) {
    return Histogram.newBuilder().setSchema(12).setCountInt(31).setSum(100).setZeroThreshold(1e-9).setZeroCountInt(1)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(1).setLength(3))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(13).setLength(2))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(21).setLength(1))
        .addAllPositiveDeltas(List.of(1L, 1L, 1L, 1L, 1L, 1L)) // 1, 2, 3, 4, 5, 6
        .addNegativeSpans(BucketSpan.newBuilder().setOffset(-16).setLength(2))
        .addNegativeSpans(BucketSpan.newBuilder().setOffset(15).setLength(1))
        .addAllNegativeDeltas(List.of(2L, 1L, 1L)) // 2, 3, 4
        .setTimestamp(t);
  }

  @Test
  void lowersSchemasAboveEightToEightMergingBuckets() {
    Histogram fine = schema12(1).build();
    Histogram floats = Histogram.newBuilder().setSchema(52).setCountFloat(3).setSum(1)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(5).setLength(2)).addPositiveCounts(1).addPositiveCounts(2)
        .setTimestamp(2).build();
    WireSeries ws = WireBatch.parse(rw1(fine, floats), new WireSeries()).read(0, new WireSeries());
    assertThat(ws.histogramProblem(0)).isNull();
    assertThat(ws.histogram(0)).isEqualTo(new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN, 8, 1e-9, 1, 31,
        100, new int[] {1, 3}, new double[] {6, 9, 6}, new int[] {-1, 3}, new double[] {2, 3, 4}, new double[0]));
    assertThat(ws.histogram(0).checkLayout()).isNull();
    // Schema 52 to 8 shifts by 44: indexes 5 and 6 both fall in bucket 1.
    assertThat(ws.histogramProblem(1)).isNull();
    assertThat(ws.histogram(1)).isEqualTo(new NativeHistogram(true, NativeHistogram.RESET_UNKNOWN, 8, 0, 0, 3, 1,
        new int[] {1, 1}, new double[] {3}, new int[0], new double[0], new double[0]));
    // The protobuf path decodes the same way.
    assertThat(HistogramProtos.fromProto(fine).histogram()).isEqualTo(ws.histogram(0));
  }

  @Test
  void refusesSchemasOutsidePrometheusRange() {
    WireSeries ws = WireBatch.parse(rw1(schema12(1).setSchema(53).build(), schema12(2).setSchema(-5).build(),
        schema12(3).setSchema(52).build(), schema12(4).setSchema(-4).build()), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histogramProblem(0).reason()).isEqualTo("invalid_native_histogram_schema");
    assertThat(ws.histogramProblem(1).reason()).isEqualTo("invalid_native_histogram_schema");
    assertThat(ws.histogramProblem(2)).isNull();
    assertThat(ws.histogramProblem(3)).isNull();
    assertThat(ws.histogram(3).schema()).isEqualTo(-4);
  }

  @Test
  void refusesCustomBucketsPrometheusWouldRefuse() {
    Histogram.Builder ok = Histogram.newBuilder().setCountFloat(3).setSum(1).setSchema(-53)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(1).setLength(2)).addPositiveCounts(1).addPositiveCounts(2)
        .addCustomValues(0.5).addCustomValues(1);
    Histogram tooFewBounds = ok.clone().clearCustomValues().addCustomValues(0.5).build();
    Histogram notIncreasing = ok.clone().clearCustomValues().addCustomValues(1).addCustomValues(1).build();
    Histogram negative = ok.clone().addNegativeSpans(BucketSpan.newBuilder().setLength(1)).addNegativeCounts(0).build();
    Histogram zero = ok.clone().setZeroThreshold(0.1).build();
    WireSeries ws = WireBatch.parse(rw1(ok.build(), tooFewBounds, notIncreasing, negative, zero), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histogramProblem(0)).isNull();
    for (int i = 1; i <= 4; i++) {
      assertThat(ws.histogramProblem(i)).as("histogram %d", i).isNotNull()
          .extracting(InvalidSeriesException::reason).isEqualTo("native_histogram_custom_buckets_invalid");
    }
    assertThat(ws.histogramProblem(1).getMessage()).contains("reach bucket 2 but there are 1 bounds");
  }

  @Test
  void keepsReadingHistogramsOfAKnownSeries() {
    byte[] body = rw1(intHistogram(1_000).build(), intHistogram(2_000).setCountInt(15).setZeroCountInt(3).build());
    WireBatch b = WireBatch.parse(body, new WireSeries());
    WireSeries ws = new WireSeries();
    b.read(0, ws); // parse() saved the label facts: this read takes the known-labels path
    assertThat(ws.histograms()).isEqualTo(2);
    assertThat(ws.histogramTimestamp(1)).isEqualTo(2_000);
    assertThat(ws.histogram(1).count()).isEqualTo(15);
    assertThat(ws.value(0)).isEqualTo(1.5);
  }

  @Test
  void decodesRemoteWrite2HistogramsLikeTheirOneZeroTwins() {
    Request req = Rw2Requests.fullRequest().build();
    List<String> refused = new ArrayList<>();
    WireBatch b = WireBatch.parseV2(req.toByteArray(), new WireSeries(), (i, p, s, h, e) -> refused.add(p.reason()));
    assertThat(refused).isEmpty();
    WireSeries ws = new WireSeries();
    List<NativeHistogram> got = new ArrayList<>();
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < b.size(); i++) {
      b.read(i, ws);
      for (int k = 0; k < ws.histograms(); k++) {
        assertThat(ws.histogramProblem(k)).isNull();
        got.add(ws.histogram(k));
        times.add(ws.histogramTimestamp(k));
      }
    }
    assertThat(got).hasSize(2);
    // Rw2Requests.intHistogram: deltas 3, -1, 2 over spans [0,2] [3,1]; negative [-2,1] delta 2.
    assertThat(got.get(0)).isEqualTo(new NativeHistogram(false, NativeHistogram.RESET_NO, 3, 1e-128, 1, 12, 42.5,
        new int[] {0, 2, 3, 1}, new double[] {3, 2, 4}, new int[] {-2, 1}, new double[] {2}, new double[0]));
    assertThat(got.get(1).isFloat()).isTrue();
    assertThat(got.get(1).customValues()).containsExactly(0.1, 1);
    assertThat(got.get(1).positiveBuckets()).containsExactly(2.5, 4);
    assertThat(got.get(1).counterResetHint()).isEqualTo(NativeHistogram.RESET_GAUGE);
    assertThat(times).doesNotContainNull();
  }

  @Test
  void refusesARemoteWrite2SeriesWithAnUnknownSchema() {
    Request req = Request.newBuilder().addSymbols("").addSymbols("__name__").addSymbols("h")
        .addTimeseries(dev.weir.proto.writev2.TimeSeries.newBuilder().addLabelsRefs(1).addLabelsRefs(2)
            .addHistograms(Rw2Requests.intHistogram(5).toBuilder().setSchema(-5)))
        .build();
    List<String> refused = new ArrayList<>();
    WireBatch b = WireBatch.parseV2(req.toByteArray(), new WireSeries(), (i, p, s, h, e) -> refused.add(p.reason()));
    assertThat(refused).containsExactly("invalid_native_histogram_schema");
    assertThat(b.size()).isZero();
  }
}
