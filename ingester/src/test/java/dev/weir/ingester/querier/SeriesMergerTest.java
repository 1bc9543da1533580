package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SeriesMergerTest {

  /** A series {@code {__name__=name, id=id}} with samples given as timestamp, value, timestamp, value... */
  static TimeSeries series(String name, String id, double... tv) {
    TimeSeries.Builder b = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("id").setValue(id));
    for (int i = 0; i < tv.length; i += 2) {
      b.addSamples(Sample.newBuilder().setTimestamp((long) tv[i]).setValue(tv[i + 1]));
    }
    return b.build();
  }

  /** Each merged series as "labels: t=v t=v ...". */
  static List<String> text(List<SeriesMerger.Series> merged) {
    List<String> out = new ArrayList<>();
    for (SeriesMerger.Series s : merged) {
      StringBuilder sb = new StringBuilder(s.labels().toString()).append(':');
      for (int i = 0; i < s.timestamps().length; i++) {
        sb.append(' ').append(s.timestamps()[i]).append('=').append(s.values()[i]);
      }
      out.add(sb.toString());
    }
    return out;
  }

  @Test
  void seriesOfAllSourcesComeOutOnceInLabelOrder() {
    List<TimeSeries> a = List.of(series("a", "1", 10, 1), series("c", "1", 10, 3));
    List<TimeSeries> b = List.of(series("b", "1", 10, 2), series("c", "2", 10, 4));
    List<TimeSeries> c = List.of();
    List<SeriesMerger.Series> merged = new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(a, b, c));
    assertThat(text(merged)).containsExactly(
        "a{id=\"1\"}: 10=1.0", "b{id=\"1\"}: 10=2.0", "c{id=\"1\"}: 10=3.0", "c{id=\"2\"}: 10=4.0");
  }

  @Test
  void overlappingSamplesOfOneSeriesAreMergedByTimestampAndIdenticalOnesKeptOnce() {
    List<TimeSeries> ingester = List.of(series("up", "x", 30, 3, 40, 4, 50, 5));
    List<TimeSeries> store = List.of(series("up", "x", 10, 1, 20, 2, 30, 3, 40, 4));
    SeriesMerger merger = new SeriesMerger(QueryLimits.UNLIMITED);
    assertThat(text(merger.merge(List.of(ingester, store))))
        .containsExactly("up{id=\"x\"}: 10=1.0 20=2.0 30=3.0 40=4.0 50=5.0");
    assertThat(merger.duplicates()).isEqualTo(2);
    assertThat(merger.conflicts()).isZero();
  }

  @Test
  void interleavedSamplesComeOutSorted() {
    List<TimeSeries> a = List.of(series("m", "1", 1, 1, 4, 4, 5, 5));
    List<TimeSeries> b = List.of(series("m", "1", 2, 2, 3, 3, 6, 6));
    assertThat(text(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(a, b))))
        .containsExactly("m{id=\"1\"}: 1=1.0 2=2.0 3=3.0 4=4.0 5=5.0 6=6.0");
  }

  @Test
  void aConflictAtOneTimestampIsWonByTheSourceListedFirstWhateverTheValues() {
    List<TimeSeries> first = List.of(series("m", "1", 10, 1, 20, 7));
    List<TimeSeries> second = List.of(series("m", "1", 10, 9, 20, 2));
    SeriesMerger merger = new SeriesMerger(QueryLimits.UNLIMITED);
    assertThat(text(merger.merge(List.of(first, second)))).containsExactly("m{id=\"1\"}: 10=1.0 20=7.0");
    assertThat(merger.conflicts()).isEqualTo(2);
    assertThat(text(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(second, first))))
        .containsExactly("m{id=\"1\"}: 10=9.0 20=2.0");
  }

  @Test
  void nanValuesDeduplicateOnlyWithTheSameBits() {
    double staleMarker = Double.longBitsToDouble(0x7ff0000000000002L);
    List<TimeSeries> a = List.of(series("m", "1", 10, staleMarker, 20, Double.NaN));
    List<TimeSeries> b = List.of(series("m", "1", 10, staleMarker, 20, staleMarker));
    SeriesMerger merger = new SeriesMerger(QueryLimits.UNLIMITED);
    List<SeriesMerger.Series> merged = merger.merge(List.of(a, b));
    assertThat(Double.doubleToRawLongBits(merged.get(0).values()[0])).isEqualTo(0x7ff0000000000002L);
    assertThat(Double.doubleToRawLongBits(merged.get(0).values()[1])).isEqualTo(Double.doubleToRawLongBits(Double.NaN));
    assertThat(merger.duplicates()).isEqualTo(1);
    assertThat(merger.conflicts()).isEqualTo(1);
  }

  @Test
  void aSourceBreakingTheOrderContractIsSortedNotMisMerged() {
    List<TimeSeries> unordered = List.of(series("z", "1", 20, 2, 10, 1), series("a", "1", 5, 5));
    List<TimeSeries> ordered = List.of(series("a", "1", 6, 6), series("z", "1", 15, 1.5));
    assertThat(text(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(unordered, ordered))))
        .containsExactly("a{id=\"1\"}: 5=5.0 6=6.0", "z{id=\"1\"}: 10=1.0 15=1.5 20=2.0");
  }

  @Test
  void theSameSeriesTwiceInOneSourceIsMergedToo() {
    List<TimeSeries> twice = List.of(series("m", "1", 10, 1), series("m", "1", 10, 1, 20, 2));
    assertThat(text(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(twice))))
        .containsExactly("m{id=\"1\"}: 10=1.0 20=2.0");
  }

  @Test
  void seriesWithoutSamplesAreLeftOut() {
    assertThat(new SeriesMerger(QueryLimits.UNLIMITED).merge(List.of(List.of(series("m", "1"))))).isEmpty();
  }

  @Test
  void theSeriesLimitCountsMergedSeriesNotCopies() {
    List<TimeSeries> a = List.of(series("m", "1", 10, 1), series("m", "2", 10, 1));
    List<TimeSeries> b = List.of(series("m", "1", 10, 1), series("m", "2", 20, 1));
    assertThat(new SeriesMerger(new QueryLimits(2, 0)).merge(List.of(a, b))).hasSize(2);
    List<TimeSeries> c = List.of(series("m", "3", 10, 1));
    assertThatThrownBy(() -> new SeriesMerger(new QueryLimits(2, 0)).merge(List.of(a, b, c)))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
        .hasMessageContaining("more than 2 series").hasMessageContaining("--querier.max-fetched-series-per-query");
  }

  @Test
  void theSampleLimitCountsSamplesAfterDeduplication() {
    List<TimeSeries> a = List.of(series("m", "1", 10, 1, 20, 2, 30, 3));
    List<TimeSeries> b = List.of(series("m", "1", 10, 1, 20, 2, 30, 3));
    assertThat(new SeriesMerger(new QueryLimits(0, 3)).merge(List.of(a, b)).get(0).timestamps()).hasSize(3);
    List<TimeSeries> c = List.of(series("m", "1", 40, 4));
    assertThatThrownBy(() -> new SeriesMerger(new QueryLimits(0, 3)).merge(List.of(a, b, c)))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
        .hasMessageContaining("more than 3 samples").hasMessageContaining("--querier.max-fetched-samples-per-query");
  }
}
