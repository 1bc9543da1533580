package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.postings.PostingsSource;
import dev.weir.storage.tsdb.postings.Sorted;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * Inverted index of a tenant head: label name → value → sorted series refs, plus the list of all
 * refs. Selection by matchers is {@link dev.weir.storage.tsdb.postings.Selector}'s.
 *
 * <p>A label pair that only one series has (a pod name, an instance address: the
 * high-cardinality labels) maps to that series' {@link MemSeries} itself (its ref is final)
 * instead of a growing {@link PostingList} with its array (48 bytes); the second series replaces
 * it with a list. With two such labels per series that is 96 bytes and two objects per series
 * less than lists, and 32 bytes and two objects less than a holder object of the ref (an
 * object fewer is less for the collector to copy, too: a WAL replay creates every one of them).
 * A name's values are a {@link ValueMap} (flat arrays, no node per value).
 *
 * <p>Thread-safe: one writer at a time (the caller holds the head's write lock for {@link #add}
 * and {@link #removeIf}), lock-free readers: a series' ref never changes, and the map publishes
 * its replacement.
 */
final class PostingsIndex implements PostingsSource {
  /** Per name, per value: the {@link MemSeries} of a pair only it has, or a {@link PostingList}. */
  private final ConcurrentHashMap<String, ValueMap> index = new ConcurrentHashMap<>();
  private final PostingList all = new PostingList();
  /**
   * Heap bytes of the lists and their arrays ({@link PostingList#OBJECT_BYTES} each plus
   * {@link PostingList#arrayBytes}), kept by the writer for {@link #bytesEstimate}.
   */
  private final java.util.concurrent.atomic.AtomicLong listBytes = new java.util.concurrent.atomic.AtomicLong(
      PostingList.OBJECT_BYTES + all.arrayBytes());

  /**
   * Adds a series under its labels, read from its own label bytes: no String is made for a name in
   * the dictionary or for a value (a value new to the index is read from the series when looked
   * up, a shared one is kept once by its list). Refs must be added in increasing order (the caller
   * holds the write lock).
   */
  void add(MemSeries s) {
    byte[] w = s.labelBytes();
    CompactLabels.Cursor c = new CompactLabels.Cursor(w);
    while (c.next()) {
      String name = c.name(); // the name dictionary's instance: no String made for most names
      ValueMap values = index.get(name);
      if (values == null) {
        int nameId = c.nameId;
        byte[] nameBytes = nameId >= 0 ? c.nameArray() // the dictionary's own array
            : Arrays.copyOfRange(c.nameArray(), c.nameOffset(), c.nameOffset() + c.nameLength());
        values = index.computeIfAbsent(name, k -> new ValueMap(nameBytes, nameId));
      }
      addPair(values, c.valueArray(), c.valueOffset(), c.valueLength(), s);
    }
    listBytes.addAndGet(all.add(s.ref()));
  }

  /** Adds series {@code s} under its value {@code w[off, off + len)} of a name: its own entry, or a list. */
  private void addPair(ValueMap values, byte[] w, int off, int len, MemSeries s) {
    int hash = ValueMap.hash(w, off, len);
    Object cur = values.get(w, off, len, hash);
    if (cur == null) {
      values.insert(hash, s);
    } else if (cur instanceof MemSeries one) {
      PostingList l = new PostingList(Arrays.copyOfRange(w, off, off + len));
      l.add(one.ref());
      l.add(s.ref());
      values.replace(hash, one, l);
      listBytes.addAndGet(PostingList.OBJECT_BYTES + l.arrayBytes());
    } else {
      listBytes.addAndGet(((PostingList) cur).add(s.ref()));
    }
  }

  /** Removes the refs for which {@code removed} is true from every list; drops empty lists. */
  void removeIf(IntPredicate removed) {
    IntPredicate keep = removed.negate();
    listBytes.addAndGet(all.retain(keep));
    for (Map.Entry<String, ValueMap> byName : index.entrySet()) {
      ValueMap values = byName.getValue();
      values.removeIf(v -> {
        if (v instanceof MemSeries one) {
          return !keep.test(one.ref());
        }
        PostingList l = (PostingList) v;
        listBytes.addAndGet(l.retain(keep));
        if (l.size() == 0) {
          listBytes.addAndGet(-PostingList.OBJECT_BYTES - l.arrayBytes());
          return true;
        }
        return false;
      });
      if (values.isEmpty()) {
        index.remove(byName.getKey(), values);
      }
    }
  }

  /**
   * Estimated heap bytes: the names (a String and its bytes, as if the index's own),
   * the value tables of every name (two 4-byte slots per table slot), the shared values' bytes
   * (their lists' copies), and the lists with their arrays as they are; a single-series pair
   * costs its table slot only (its value is the series' own).
   */
  long bytesEstimate() {
    long tables = 0;
    for (Map.Entry<String, ValueMap> e : index.entrySet()) {
      ValueMap values = e.getValue();
      tables += 24 + 2 * ValueMap.arrayBytes(values.nameLength()) + values.tableBytes() + values.keyBytes();
    }
    return tables + listBytes.get();
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

  Collection<String> labelValues(String name) {
    ValueMap values = index.get(name);
    return values == null ? List.of() : values.values();
  }

  @Override
  public List<int[]> refsMatching(String name, Predicate<String> matches) {
    ValueMap values = index.get(name);
    return values == null ? List.of() : values.refsMatching(matches);
  }

  @Override
  public int[] get(String name, String value) {
    ValueMap values = index.get(name);
    if (values == null) {
      return Sorted.EMPTY;
    }
    Object v = values.get(value);
    if (v == null) {
      return Sorted.EMPTY;
    }
    return v instanceof MemSeries one ? new int[] {one.ref()} : ((PostingList) v).snapshot();
  }
}
