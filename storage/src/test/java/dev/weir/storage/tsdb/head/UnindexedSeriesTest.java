package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import org.junit.jupiter.api.Test;

class UnindexedSeriesTest {
  @Test
  void sortsByRefKeepsWhatItIsToldAndIndexes() {
    UnindexedSeries u = new UnindexedSeries();
    for (int i = 0; i < 300; i++) { // past the first capacity, refs out of order
      int ref = (i * 7919) % 300 + 1;
      MemSeries s = new MemSeries(Labels.of("__name__", "m", "i", "s" + ref), ref);
      u.add(s);
    }
    u.sortByRefAndKeep(s -> s.ref() % 10 != 0);
    assertThat(u.size()).isEqualTo(270);
    PostingsIndex postings = new PostingsIndex();
    int last = 0;
    for (int i = 0; i < u.size(); i++) {
      assertThat(u.series(i).ref()).isGreaterThan(last).isNotEqualTo(10);
      last = u.series(i).ref();
      u.index(i, postings);
    }
    assertThat(postings.get("__name__", "m")).hasSize(270).isSorted();
    assertThat(postings.get("i", "s7")).containsExactly(7);
    assertThat(postings.get("i", "s10")).isEmpty();
  }
}
