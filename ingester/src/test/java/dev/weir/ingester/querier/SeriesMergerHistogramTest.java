package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.wire.HistogramProtos;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Native histogram samples through the querier's merge and back into chunks. */
class SeriesMergerHistogramTest {
  static NativeHistogram h(int n, int hint) {
    return new NativeHistogram(false, hint, 1, 0.001, 1, 1 + 2.0 * n, n, new int[] {0, 2}, new double[] {n, n},
        new int[0], new double[0], new double[0]);
  }

  static NativeHistogram f(double x) {
    return new NativeHistogram(true, NativeHistogram.RESET_UNKNOWN, 0, 0, 0, x, x, new int[] {3, 1},
        new double[] {x}, new int[0], new double[0], new double[0]);
  }

  static TimeSeries series(Object... tAndH) {
    TimeSeries.Builder b = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("h"));
    for (int i = 0; i < tAndH.length; i += 2) {
      long t = (Long) tAndH[i];
      if (tAndH[i + 1] instanceof NativeHistogram nh) {
        b.addHistograms(HistogramProtos.toProto(nh, t));
      } else {
        b.addSamples(Sample.newBuilder().setTimestamp(t).setValue((Double) tAndH[i + 1]));
      }
    }
    return b.build();
  }

  @Test
  void mergesHistogramsByTimestampDroppingCopiesAndCountingConflicts() {
    // Ingester A and a store-gateway overlap at 20 (same value, another reset hint) and 30 (other value).
    List<TimeSeries> a = List.of(series(10L, h(1, 0), 20L, h(2, 0), 30L, h(3, 0), 5L, 1.5));
    List<TimeSeries> b = List.of(series(20L, h(2, NativeHistogram.RESET_NO), 30L, h(9, 0), 40L, h(4, 0)));
    SeriesMerger m = new SeriesMerger(QueryLimits.UNLIMITED);
    List<SeriesMerger.Series> out = m.merge(List.of(a, b));
    assertThat(out).hasSize(1);
    SeriesMerger.Series s = out.get(0);
    assertThat(s.timestamps()).containsExactly(5);
    assertThat(s.histogramTimestamps()).containsExactly(10, 20, 30, 40);
    assertThat(s.histograms()).containsExactly(h(1, 0), h(2, 0), h(3, 0), h(4, 0));
    assertThat(m.duplicates()).isEqualTo(1);
    assertThat(m.conflicts()).isEqualTo(1);
  }

  @Test
  void aSeriesWithOnlyHistogramsIsKeptAndCountsAgainstTheSampleLimit() {
    List<TimeSeries> a = List.of(series(10L, f(1.5), 20L, f(2.5)));
    assertThat(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(a))).hasSize(1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SeriesMerger(new QueryLimits(0, 1))
        .merge(List.of(a))).hasMessageContaining("samples");
  }

  @Test
  void querierChunksCarryTheHistogramEncodings() {
    List<TimeSeries> a = List.of(series(1L, 1.0, 2L, h(1, 0), 3L, h(2, 0), 4L, f(1), 5L, 2.0));
    SeriesMerger.Series s = new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(a)).get(0);
    SeriesChunks sc = Querier.chunks(s);
    assertThat(sc.chunks()).extracting(ChunkData::encoding)
        .containsExactly(Chunks.XOR, Chunks.HISTOGRAM, Chunks.FLOAT_HISTOGRAM);
    SeriesChunks.Histograms hs = sc.histograms(0, 10);
    assertThat(hs.timestamps()).containsExactly(2, 3, 4);
    assertThat(hs.histograms()[2]).isEqualTo(f(1));
    assertThat(sc.samples(0, 10).timestamps()).containsExactly(1, 5);
  }
}
