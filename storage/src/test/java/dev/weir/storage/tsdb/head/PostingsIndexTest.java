package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.postings.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PostingsIndexTest {
  static MemSeries series(int ref, String pod, String job) {
    return new MemSeries(Labels.of("__name__", "up", "job", job, "pod", pod), ref);
  }

  static void add(PostingsIndex index, MemSeries s) {
    index.add(s);
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
    // and job 4 slots, pod 8 (four values at a load of at most one half); 3 names, each a
    // 24-byte String and two 24-byte arrays; the values of the two lists, 24-byte arrays. The
    // values of a single series (p1-p4, db) are the series' own bytes: nothing in the index.
    assertThat(index.bytesEstimate())
        .isEqualTo(3 * (32L + 16 + 4) + 2 * (16 + 4 * 4) * 2 + 2 * (16 + 4 * 8) + 3 * (24 + 2 * 24) + 2 * 24);
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
    // plus 5 of room; tables: __name__ and job 4 slots, pod 8 (three values left); 3 names, 72
    // bytes each; the values of the lists up and api (db's list went), 24 bytes each.
    assertThat(index.bytesEstimate())
        .isEqualTo(3 * (32L + 16 + 8) + 2 * (16 + 4 * 4) * 2 + 2 * (16 + 4 * 8) + 3 * (24 + 2 * 24) + 2 * 24);

    index.removeIf(ref -> true);
    assertThat(index.labelNames()).isEmpty();
    assertThat(index.all()).isEmpty();
    assertThat(index.bytesEstimate()).isEqualTo(32L + 16 + 5); // the empty list of all refs
  }
  /**
   * Random label sets against a plain map of maps: every pair's refs, every name's values, through
   * values with equal hashes ("Aa"/"BB"), empty and non-ASCII values, a name longer than the name
   * dictionary takes (stored in full in each series), single-series pairs turning into lists, and
   * a removal of a third of the series.
   */
  @Test
  void findsWhatAPlainMapOfMapsFinds() {
    PostingsIndex index = new PostingsIndex();
    Map<String, Map<String, List<Integer>>> reference = new TreeMap<>();
    java.util.Random rnd = new java.util.Random(9);
    String longName = "l".repeat(200);
    String[] jobs = {"api", "db", "", "caf\u00e9", "q", "AaAa", "BBBB", "AaBB"};
    for (int ref = 1; ref <= 3_000; ref++) {
      // Label sets of different sizes and orders of names, so a position's name changes.
      Labels l = rnd.nextBoolean()
          ? Labels.of("__name__", "up", "job", jobs[rnd.nextInt(jobs.length)], "pod", "p" + rnd.nextInt(3_000))
          : Labels.of("__name__", "up", "a", "x" + rnd.nextInt(3), "pod", "p" + rnd.nextInt(3_000), "zone", "z\u00fc",
              longName, rnd.nextBoolean() ? "AaBB" : "BBAa" + rnd.nextInt(500));
      index.add(new MemSeries(l, ref));
      for (int i = 0; i < l.size(); i++) {
        reference.computeIfAbsent(l.name(i), k -> new TreeMap<>()).computeIfAbsent(l.value(i), k -> new ArrayList<>())
            .add(ref);
      }
    }
    assertMatches(index, reference);

    index.removeIf(ref -> ref % 3 == 0);
    for (Map<String, List<Integer>> values : reference.values()) {
      values.values().forEach(refs -> refs.removeIf(r -> r % 3 == 0));
      values.values().removeIf(List::isEmpty);
    }
    reference.values().removeIf(Map::isEmpty);
    assertMatches(index, reference);
  }

  /**
   * Selection by every kind of matcher (equal, not equal, regular expressions, each also with the
   * empty value, on present and absent names) answers what checking each series' labels answers.
   */
  @Test
  void selectionAnswersWhatEachSeriesLabelsAnswer() {
    PostingsIndex index = new PostingsIndex();
    List<Labels> all = new ArrayList<>();
    java.util.Random rnd = new java.util.Random(3);
    String[] jobs = {"api", "db", "", "caf\u00e9"};
    for (int ref = 1; ref <= 2_000; ref++) {
      Labels l = rnd.nextBoolean()
          ? Labels.of("__name__", "up", "job", jobs[rnd.nextInt(jobs.length)], "pod", "p" + ref)
          : Labels.of("__name__", "up", "pod", "p" + ref, "zone", "z" + rnd.nextInt(3));
      index.add(new MemSeries(l, ref));
      all.add(l);
    }
    List<List<Matcher>> queries = List.of(
        List.of(Matcher.eq("job", "api")), List.of(Matcher.eq("job", "")), List.of(Matcher.neq("job", "api")),
        List.of(Matcher.neq("job", "")), List.of(Matcher.neq("pod", "p7")), List.of(Matcher.neq("pod", "")),
        List.of(Matcher.neq("absent", "")), List.of(Matcher.neq("absent", "x")), List.of(Matcher.neq("job", "never")),
        List.of(Matcher.re("pod", "p1.*")), List.of(Matcher.re("job", "a.*|")), List.of(Matcher.nre("pod", "p1.*")),
        List.of(Matcher.nre("job", "")), List.of(Matcher.eq("__name__", "up"), Matcher.neq("zone", "z1")),
        List.of(Matcher.re("zone", "z[01]"), Matcher.nre("pod", ".*5")));
    for (List<Matcher> q : queries) {
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < all.size(); i++) {
        Labels l = all.get(i);
        if (q.stream().allMatch(m -> m.matches(l))) {
          expected.add(i + 1);
        }
      }
      assertThat(Selector.select(index, q)).as(q.toString())
          .containsExactly(expected.stream().mapToInt(Integer::intValue).toArray());
    }
  }

  private static void assertMatches(PostingsIndex index, Map<String, Map<String, List<Integer>>> reference) {
    assertThat(index.labelNames()).containsExactlyInAnyOrderElementsOf(reference.keySet());
    for (Map.Entry<String, Map<String, List<Integer>>> byName : reference.entrySet()) {
      String name = byName.getKey();
      assertThat(index.labelValues(name)).containsExactlyInAnyOrderElementsOf(byName.getValue().keySet());
      for (Map.Entry<String, List<Integer>> v : byName.getValue().entrySet()) {
        assertThat(index.get(new String(name), new String(v.getKey()))).as("%s=%s", name, v.getKey())
            .containsExactly(v.getValue().stream().mapToInt(Integer::intValue).toArray());
      }
      assertThat(index.get(name, "never")).isEmpty();
      // The one-pass walk of matching values finds the refs of exactly those values.
      java.util.function.Predicate<String> odd = v -> (v.hashCode() & 1) == 1;
      List<Integer> expected = new ArrayList<>();
      byName.getValue().forEach((v, refs) -> {
        if (odd.test(v)) {
          expected.addAll(refs);
        }
      });
      List<Integer> found = new ArrayList<>();
      index.refsMatching(name, odd).forEach(refs -> java.util.Arrays.stream(refs).forEach(found::add));
      assertThat(found).containsExactlyInAnyOrderElementsOf(expected);
    }
  }
}
