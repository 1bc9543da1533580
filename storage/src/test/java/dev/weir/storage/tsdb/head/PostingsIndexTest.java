package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PostingsIndexTest {
  static MemSeries series(int ref, String pod, String job) {
    return new MemSeries(Labels.of("__name__", "up", "job", job, "pod", pod), ref);
  }

  static void add(PostingsIndex index, MemSeries s) {
    index.add(s, s.labels());
  }

  @Test
  void aPairOfOneSeriesBecomesAListWhenASecondSeriesHasIt() {
    PostingsIndex index = new PostingsIndex();
    add(index, series(1, "p1", "api"));
    assertThat(index.get("job", "api")).containsExactly(1);
    add(index, series(2, "p2", "api"));
    add(index, series(3, "p3", "db"));
    add(index, series(4, "p4", "api"));

    assertThat(index.get("job", "api")).containsExactly(1, 2, 4);
    assertThat(index.get("job", "db")).containsExactly(3);
    assertThat(index.get("pod", "p2")).containsExactly(2);
    assertThat(index.get("__name__", "up")).containsExactly(1, 2, 3, 4);
    assertThat(index.get("pod", "p9")).isEmpty();
    assertThat(index.get("zone", "a")).isEmpty();
    assertThat(index.all()).containsExactly(1, 2, 3, 4);
    assertThat(index.labelValues("pod")).containsExactlyInAnyOrder("p1", "p2", "p3", "p4");
    assertThat(index.labelNames()).containsExactlyInAnyOrder("__name__", "job", "pod");
    // Lists: all, __name__=up and job=api, each a 32-byte object and a 4-byte array (16 + 4: a ref
    // difference under 128 is one byte); value tables (two arrays of 16 + 4 per slot): __name__
    // and job 4 slots, pod 8 (four values at a load of at most one half); strings (the index
    // holds the head's only copy): 3 names and 7 values, each up to 8 characters, so 24 bytes of
    // String and 24 of array.
    assertThat(index.bytesEstimate()).isEqualTo(3 * (32L + 16 + 4) + 2 * (16 + 4 * 4) * 2 + 2 * (16 + 4 * 8) + 10 * 48);
  }

  @Test
  void removalDropsSingleSeriesPairsAndEmptyListsAndKeepsTheRest() {
    PostingsIndex index = new PostingsIndex();
    for (int ref = 1; ref <= 6; ref++) {
      add(index, series(ref, "p" + ref, ref <= 2 ? "db" : "api"));
    }
    Set<Integer> removed = Set.of(1, 2, 4);
    index.removeIf(removed::contains);

    assertThat(index.get("job", "db")).isEmpty();
    assertThat(index.labelValues("job")).containsExactly("api");
    assertThat(index.get("job", "api")).containsExactly(3, 5, 6);
    assertThat(index.get("pod", "p4")).isEmpty();
    assertThat(index.get("pod", "p5")).containsExactly(5);
    assertThat(index.labelValues("pod")).containsExactlyInAnyOrder("p3", "p5", "p6");
    assertThat(index.all()).containsExactly(3, 5, 6);
    // Lists all, __name__=up and job=api, rewritten by the removal into arrays of their 3 bytes
    // plus 5 of room; tables: __name__ and job 4 slots, pod 8 (three values left); strings: 3
    // names and 5 values left, 48 bytes each.
    assertThat(index.bytesEstimate()).isEqualTo(3 * (32L + 16 + 8) + 2 * (16 + 4 * 4) * 2 + 2 * (16 + 4 * 8) + 8 * 48);

    index.removeIf(ref -> true);
    assertThat(index.labelNames()).isEmpty();
    assertThat(index.all()).isEmpty();
    assertThat(index.bytesEstimate()).isEqualTo(32L + 16 + 5); // the empty list of all refs
  }
  /** A replay's build adds series from their label bytes: the same index as from their labels. */
  @Test
  void addingFromLabelBytesBuildsTheSameIndexAsFromLabels() {
    PostingsIndex fromLabels = new PostingsIndex();
    PostingsIndex fromBytes = new PostingsIndex();
    java.util.Random rnd = new java.util.Random(9);
    String[] jobs = {"api", "db", "", "caf\u00e9", "q"};
    for (int ref = 1; ref <= 2_000; ref++) {
      // Label sets of different sizes and orders of names, so a position's name changes.
      Labels l = rnd.nextBoolean()
          ? Labels.of("__name__", "up", "job", jobs[rnd.nextInt(jobs.length)], "pod", "p" + rnd.nextInt(300))
          : Labels.of("__name__", "up", "a", "x" + rnd.nextInt(3), "pod", "p" + rnd.nextInt(300), "zone", "z\u00fc");
      MemSeries s = new MemSeries(l, ref);
      fromLabels.add(s, l);
      fromBytes.addEncoded(s);
    }
    assertThat(fromBytes.labelNames()).isEqualTo(fromLabels.labelNames());
    for (String name : fromLabels.labelNames()) {
      assertThat(fromBytes.labelValues(name)).containsExactlyInAnyOrderElementsOf(fromLabels.labelValues(name));
      for (String value : fromLabels.labelValues(name)) {
        assertThat(fromBytes.get(name, value)).as("%s=%s", name, value).containsExactly(fromLabels.get(name, value));
      }
    }
    assertThat(fromBytes.all()).containsExactly(fromLabels.all());
    assertThat(fromBytes.bytesEstimate()).isEqualTo(fromLabels.bytesEstimate());
  }
}
