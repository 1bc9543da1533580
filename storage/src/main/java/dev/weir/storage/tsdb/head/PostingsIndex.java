package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.postings.PostingsSource;
import dev.weir.storage.tsdb.postings.Sorted;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;

/**
 * Inverted index of a tenant head: label name → value → sorted series refs, plus the list of all
 * refs. Selection by matchers is {@link dev.weir.storage.tsdb.postings.Selector}'s.
 *
 * <p>Thread-safe: one writer at a time ({@link #add} and {@link #removeIf} synchronize on the
 * index), lock-free readers.
 */
final class PostingsIndex implements PostingsSource {
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, PostingList>> index =
      new ConcurrentHashMap<>();
  private final PostingList all = new PostingList();
  private final java.util.concurrent.atomic.AtomicInteger lists = new java.util.concurrent.atomic.AtomicInteger();

  /** Adds a series; refs must be added in increasing order (the caller holds the write lock). */
  void add(int ref, Labels labels) {
    for (int i = 0; i < labels.size(); i++) {
      index
          .computeIfAbsent(labels.name(i), k -> new ConcurrentHashMap<>())
          .computeIfAbsent(labels.value(i), k -> {
            lists.incrementAndGet();
            return new PostingList();
          })
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
      values.entrySet().removeIf(e -> {
        boolean empty = e.getValue().size() == 0;
        if (empty) {
          lists.decrementAndGet();
        }
        return empty;
      });
      if (values.isEmpty()) {
        index.remove(byName.getKey(), values);
      }
    }
  }

  /**
   * Estimated heap bytes: per list its object, array header and map node (~88 bytes), plus 4
   * bytes per entry with growth slack (~1.25).
   */
  long bytesEstimate(long entries) {
    return lists.get() * 88L + entries * 5L;
  }

  @Override
  public int[] all() {
    return all.snapshot();
  }

  @Override
  public Collection<String> values(String name) {
    return labelValues(name);
  }

  Set<String> labelNames() {
    return index.keySet();
  }

  Set<String> labelValues(String name) {
    Map<String, PostingList> values = index.get(name);
    return values == null ? Set.of() : values.keySet();
  }

  @Override
  public int[] get(String name, String value) {
    Map<String, PostingList> values = index.get(name);
    if (values == null) {
      return Sorted.EMPTY;
    }
    PostingList l = values.get(value);
    return l == null ? Sorted.EMPTY : l.snapshot();
  }
}
