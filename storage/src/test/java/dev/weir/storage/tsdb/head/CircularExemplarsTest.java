package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.head.CircularExemplars.Outcome;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CircularExemplarsTest {
  private static final Labels A = Labels.of("__name__", "a");
  private static final Labels B = Labels.of("__name__", "b");

  private static Exemplar ex(long t) {
    return new Exemplar(Labels.of("trace_id", "t" + t), t, t);
  }

  private static List<Long> times(CircularExemplars c, Labels series) {
    List<Long> out = new ArrayList<>();
    for (SeriesExemplars s : c.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      if (s.seriesLabels().equals(series)) {
        s.exemplars().forEach(e -> out.add(e.timestamp()));
      }
    }
    return out;
  }

  @Test
  void whenFullTheOldestOfAllSeriesIsEvicted() {
    CircularExemplars c = new CircularExemplars(3);
    c.add(A, ex(1));
    c.add(B, ex(2));
    c.add(A, ex(3));
    assertThat(c.size()).isEqualTo(3);
    assertThat(c.add(B, ex(4))).isEqualTo(Outcome.ADDED); // evicts A@1
    assertThat(times(c, A)).containsExactly(3L);
    assertThat(times(c, B)).containsExactly(2L, 4L);
    c.add(A, ex(5)); // evicts B@2
    c.add(A, ex(6)); // evicts A@3
    assertThat(c.size()).isEqualTo(3);
    assertThat(times(c, A)).containsExactly(5L, 6L);
    assertThat(times(c, B)).containsExactly(4L);
    c.add(A, ex(7)); // evicts B@4: B leaves the index
    assertThat(c.seriesCount()).isEqualTo(1);
    assertThat(times(c, B)).isEmpty();
    assertThat(times(c, A)).containsExactly(5L, 6L, 7L);
  }

  @Test
  void olderOrSameTimeIsOutOfOrderAndAnEqualOneIsADuplicate() {
    CircularExemplars c = new CircularExemplars(10);
    assertThat(c.add(A, ex(5))).isEqualTo(Outcome.ADDED);
    assertThat(c.add(A, ex(5))).isEqualTo(Outcome.DUPLICATE);
    assertThat(c.add(A, new Exemplar(Labels.of("trace_id", "other"), 5, 5))).isEqualTo(Outcome.OUT_OF_ORDER);
    assertThat(c.add(A, ex(4))).isEqualTo(Outcome.OUT_OF_ORDER);
    assertThat(c.add(B, ex(4))).isEqualTo(Outcome.ADDED); // per series
    assertThat(c.size()).isEqualTo(2);
  }

  @Test
  void capacityZeroStoresNothing() {
    CircularExemplars c = new CircularExemplars(0);
    assertThat(c.add(A, ex(1))).isEqualTo(Outcome.DISABLED);
    assertThat(c.size()).isZero();
    assertThat(c.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())).isEmpty();
  }

  @Test
  void resizeKeepsTheNewestThatFit() {
    CircularExemplars c = new CircularExemplars(4);
    for (long t = 1; t <= 6; t++) {
      c.add(t % 2 == 0 ? A : B, ex(t));
    }
    c.resize(3);
    assertThat(c.size()).isEqualTo(3);
    assertThat(times(c, A)).containsExactly(4L, 6L);
    assertThat(times(c, B)).containsExactly(5L);
    c.resize(5);
    c.add(B, ex(7));
    c.add(B, ex(8));
    assertThat(c.size()).isEqualTo(5);
    assertThat(times(c, B)).containsExactly(5L, 7L, 8L);
    c.resize(0);
    assertThat(c.size()).isZero();
  }

  @Test
  void selectFiltersByTimeAndMatchersInLabelOrder() {
    CircularExemplars c = new CircularExemplars(10);
    c.add(B, ex(1));
    c.add(A, ex(2));
    c.add(A, ex(3));
    c.add(A, ex(9));
    List<SeriesExemplars> all = c.select(2, 3, List.of());
    assertThat(all).extracting(SeriesExemplars::seriesLabels).containsExactly(A);
    assertThat(all.get(0).exemplars()).extracting(Exemplar::timestamp).containsExactly(2L, 3L);
    assertThat(c.select(0, 100, List.of(Matcher.eq("__name__", "b")))).extracting(SeriesExemplars::seriesLabels)
        .containsExactly(B);
    assertThat(c.select(0, 100, List.of())).extracting(SeriesExemplars::seriesLabels).containsExactly(A, B);
  }
}
