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
    if (m.type() == Matcher.Type.NEQ) {
      // The complement of one value, as Prometheus does: no value of the name is looked at.
      int[] other = index.get(m.name(), m.value());
      if (m.value().isEmpty()) { // a!="": every series with a value for a
        return Sorted.subtract(Sorted.union(index.refsMatching(m.name(), PostingsSource.ANY)), other);
      }
      return other.length == 0 ? index.all() : Sorted.subtract(index.all(), other);
    }
    if (m.matchesEmpty()) {
      // Every series, minus those whose value for the label does not match.
      List<int[]> excluded = index.refsMatching(m.name(), v -> !m.matches(v));
      return excluded.isEmpty() ? index.all() : Sorted.subtract(index.all(), Sorted.union(excluded));
    }
    if (m.type() == Matcher.Type.EQ) {
      return index.get(m.name(), m.value());
    }
    return Sorted.union(index.refsMatching(m.name(), m::matches));
  }
}
