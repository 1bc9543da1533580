package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * Inverted index of a tenant head: label name → value → sorted series refs, plus the list of all
 * refs. Selecting by matchers follows Prometheus: a matcher that matches the empty value also
 * selects series without the label.
 *
 * <p>Thread-safe: one writer at a time ({@link #add} and {@link #removeIf} synchronize on the
 * index), lock-free readers.
 */
final class PostingsIndex {
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, PostingList>> index =
      new ConcurrentHashMap<>();
  private final PostingList all = new PostingList();

  /** Adds a series; refs must be added in increasing order (the caller holds the write lock). */
  void add(int ref, Labels labels) {
    for (int i = 0; i < labels.size(); i++) {
      index
          .computeIfAbsent(labels.name(i), k -> new ConcurrentHashMap<>())
          .computeIfAbsent(labels.value(i), k -> new PostingList())
          .add(ref);
    }
    all.add(ref);
  }

  /** Removes the refs for which {@code removed} is true from every list; drops empty lists. */
  void removeIf(IntPredicate removed) {
    IntPredicate keep = removed.negate();
    all.retain(keep);
    for (Map.Entry<String, ConcurrentHashMap<String, PostingList>> byName : index.entrySet()) {
      ConcurrentHashMap<String, PostingList> values = byName.getValue();
      values.values().forEach(l -> l.retain(keep));
      values.entrySet().removeIf(e -> e.getValue().size() == 0);
      if (values.isEmpty()) {
        index.remove(byName.getKey(), values);
      }
    }
  }

  int[] all() {
    return all.snapshot();
  }

  Set<String> labelNames() {
    return index.keySet();
  }

  Set<String> labelValues(String name) {
    Map<String, PostingList> values = index.get(name);
    return values == null ? Set.of() : values.keySet();
  }

  int[] get(String name, String value) {
    Map<String, PostingList> values = index.get(name);
    if (values == null) {
      return Sorted.EMPTY;
    }
    PostingList l = values.get(value);
    return l == null ? Sorted.EMPTY : l.snapshot();
  }

  /** Sorted refs of the series that satisfy every matcher (all series when there are none). */
  int[] select(List<Matcher> matchers) {
    int[] result = null;
    // Matchers that cannot match the empty value narrow fastest; apply them first.
    List<Matcher> ordered = new ArrayList<>(matchers);
    ordered.sort((a, b) -> Boolean.compare(a.matchesEmpty(), b.matchesEmpty()));
    for (Matcher m : ordered) {
      int[] refs = selectOne(m);
      result = result == null ? refs : Sorted.intersect(result, refs);
      if (result.length == 0) {
        return result;
      }
    }
    return result == null ? all() : result;
  }

  private int[] selectOne(Matcher m) {
    Map<String, PostingList> values = index.get(m.name());
    if (m.matchesEmpty()) {
      // Every series, minus those whose value for the label does not match.
      if (values == null) {
        return all();
      }
      List<int[]> excluded = new ArrayList<>();
      for (Map.Entry<String, PostingList> e : values.entrySet()) {
        if (!m.matches(e.getKey())) {
          excluded.add(e.getValue().snapshot());
        }
      }
      return Sorted.subtract(all(), Sorted.union(excluded));
    }
    if (values == null) {
      return Sorted.EMPTY;
    }
    if (m.type() == Matcher.Type.EQ) {
      PostingList l = values.get(m.value());
      return l == null ? Sorted.EMPTY : l.snapshot();
    }
    List<int[]> included = new ArrayList<>();
    for (Map.Entry<String, PostingList> e : values.entrySet()) {
      if (m.matches(e.getKey())) {
        included.add(e.getValue().snapshot());
      }
    }
    return Sorted.union(included);
  }
}
