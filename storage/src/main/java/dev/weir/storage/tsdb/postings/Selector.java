package dev.weir.storage.tsdb.postings;

import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;

/**
 * Selects series refs by label matchers with Prometheus semantics: a series without a label has
 * the empty value for it, so a matcher that matches "" also selects series lacking the label.
 * Stateless.
 */
public final class Selector {
  private Selector() {}

  /** Sorted refs of the series that satisfy every matcher (all series when there are none). */
  public static int[] select(PostingsSource index, List<Matcher> matchers) {
    int[] result = null;
    // Matchers that cannot match the empty value narrow fastest; apply them first.
    List<Matcher> ordered = new ArrayList<>(matchers);
    ordered.sort((a, b) -> Boolean.compare(a.matchesEmpty(), b.matchesEmpty()));
    for (Matcher m : ordered) {
      int[] refs = selectOne(index, m);
      result = result == null ? refs : Sorted.intersect(result, refs);
      if (result.length == 0) {
        return result;
      }
    }
    return result == null ? index.all() : result;
  }

  private static int[] selectOne(PostingsSource index, Matcher m) {
    // Every series before the pairs to subtract from it: the head publishes a new series' pairs
    // before its ref in all, so a series in this snapshot of all has its pairs visible below.
    if (m.type() == Matcher.Type.NEQ) {
      // The complement of one value, as Prometheus does: no value of the name is looked at.
      if (m.value().isEmpty()) { // a!="": every series with a value for a
        List<int[]> valued = index.refsMatching(m.name(), PostingsSource.ANY);
        return Sorted.subtract(Sorted.union(valued), index.get(m.name(), ""));
      }
      int[] all = index.all();
      int[] other = index.get(m.name(), m.value());
      return other.length == 0 ? all : Sorted.subtract(all, other);
    }
    if (m.matchesEmpty()) {
      // Every series, minus those whose value for the label does not match.
      int[] all = index.all();
      List<int[]> excluded = index.refsMatching(m.name(), v -> !m.matches(v));
      return excluded.isEmpty() ? all : Sorted.subtract(all, Sorted.union(excluded));
    }
    if (m.type() == Matcher.Type.EQ) {
      return index.get(m.name(), m.value());
    }
    return Sorted.union(index.refsMatching(m.name(), m::matches));
  }
}
