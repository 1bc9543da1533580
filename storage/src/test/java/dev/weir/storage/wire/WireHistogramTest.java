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
    return Histogram.newBuilder().setCountInt(12).setSum(17.25).setSchema(2).setZeroThreshold(0.001)
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
    assertThat(h).isEqualTo(new NativeHistogram(false, NativeHistogram.RESET_NO, 2, 0.001, 2, 12, 17.25,
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
    Histogram schema = intHistogram(3).setSchema(9).build();
    WireSeries ws = WireBatch.parse(rw1(spans, negative, schema, intHistogram(4).build()), new WireSeries())
        .read(0, new WireSeries());
    assertThat(ws.histograms()).isEqualTo(4);
    assertThat(ws.histogramProblem(0).reason()).isEqualTo("native_histogram_span_bucket_mismatch");
    assertThat(ws.histogramProblem(1).reason()).isEqualTo("native_histogram_negative_count");
    assertThat(ws.histogramProblem(2).reason()).isEqualTo("invalid_native_histogram_schema");
    assertThat(ws.histogramProblem(2).getMessage()).contains("schema 9");
    assertThat(ws.histogramProblem(3)).isNull();
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
    byte[] body = rw1(intHistogram(1_000).build(), intHistogram(2_000).setCountInt(13).build());
    WireBatch b = WireBatch.parse(body, new WireSeries());
    WireSeries ws = new WireSeries();
    b.read(0, ws); // parse() saved the label facts: this read takes the known-labels path
    assertThat(ws.histograms()).isEqualTo(2);
    assertThat(ws.histogramTimestamp(1)).isEqualTo(2_000);
    assertThat(ws.histogram(1).count()).isEqualTo(13);
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
    assertThat(got.get(0)).isEqualTo(new NativeHistogram(false, NativeHistogram.RESET_NO, 3, 1e-128, 1, 10, 42.5,
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
