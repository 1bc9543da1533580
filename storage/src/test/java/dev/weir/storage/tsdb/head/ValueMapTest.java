package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.LabelNames;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.postings.PostingsSource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The map keeps no value of its own: a series' value is read from the series' labels, a list's
 * from the list. Every test looks values up by equal strings made anew, never the same instances.
 */
class ValueMapTest {
  private static ValueMap map(String name) {
    byte[] b = name.getBytes(StandardCharsets.UTF_8);
    return new ValueMap(b, LabelNames.id(b, 0, b.length));
  }

  /** A name longer than the dictionary takes: stored in full in each series, as a decoy before the name asked for. */
  private static final String DECOY = "m".repeat(LabelNames.MAX_NAME_BYTES + 72);

  private static MemSeries series(int ref, String name, String value) {
    return new MemSeries(Labels.of("__name__", "m", DECOY, "decoy", name, value, "zz", "after"), ref);
  }

  private static PostingList list(String value, int... refs) {
    PostingList l = new PostingList(value.getBytes(StandardCharsets.UTF_8));
    for (int r : refs) {
      l.add(r);
    }
    return l;
  }

  private static int hash(String value) {
    byte[] b = value.getBytes(StandardCharsets.UTF_8);
    return ValueMap.hash(b, 0, b.length);
  }

  /** Inserts {@code entry} for {@code value}, or replaces the entry the value has. */
  private static void put(ValueMap m, String value, Object entry) {
    Object cur = m.get(value);
    if (cur == null) {
      m.insert(hash(value), entry);
    } else {
      m.replace(hash(value), cur, (PostingList) entry);
    }
  }

  @Test
  void theHashCoversEveryByteAndIgnoresWhereTheBytesAre() {
    byte[] a = "xxapi-server-17-9e3779b9".getBytes(StandardCharsets.UTF_8);
    assertThat(ValueMap.hash(a, 2, a.length - 2)).isEqualTo(hash("api-server-17-9e3779b9"));
    java.util.Set<Integer> hashes = new java.util.HashSet<>();
    for (String s : new String[] {"", "a", "b", "ab", "ba", "abcdefgh", "abcdefgi", "abcdefghi", "abcdefghj",
        "Aa", "BB", "AaAa", "AaBB", "BBAa", "BBBB", "caf\u00e9", "caf\u00e8"}) {
      assertThat(hashes.add(hash(s))).as("%s: String's hash collisions are not this hash's", s).isTrue();
    }
  }

  /**
   * Values whose hashes are equal, found by trying (the hash is seeded per process, so no fixed
   * pair collides): about ten pairs among 300,000 values of a 32-bit hash.
   */
  private static List<String[]> collidingPairs() {
    Map<Integer, String> seen = new HashMap<>();
    List<String[]> pairs = new ArrayList<>();
    for (int i = 0; i < 300_000 && pairs.size() < 6; i++) {
      String v = "c" + i;
      String before = seen.putIfAbsent(hash(v), v);
      if (before != null) {
        pairs.add(new String[] {before, v});
      }
    }
    return pairs;
  }

  @Test
  void getInsertReplaceAndIterateLikeAMapThroughGrowth() {
    ValueMap m = map("pod");
    Map<String, Object> reference = new HashMap<>();
    for (int i = 0; i < 5_000; i++) {
      String v = "pod-" + i;
      MemSeries s = series(i + 1, "pod", v);
      put(m, v, s);
      reference.put(v, s);
      if (i % 7 == 0) {
        String shared = "pod-" + (i / 2);
        PostingList l = list(shared, i / 2 + 1, i + 10_000); // a series becomes a list of two
        put(m, shared, l);
        reference.put(shared, l);
      }
    }
    assertThat(m.size()).isEqualTo(reference.size());
    reference.forEach((k, v) -> assertThat(m.get(new String(k))).as(k).isSameAs(v));
    assertThat(m.get("pod-5000")).isNull();
    assertThat(m.get("pod-")).isNull();
    assertThat(m.get("")).isNull();
    assertThat(m.values()).hasSize(reference.size()).containsExactlyInAnyOrderElementsOf(reference.keySet());
    assertThat(m.tableBytes()).as("load at most one half").isEqualTo(2 * (16 + 4L * 16_384));
    // Each value that matches once, with its refs, series and lists alike, across the 512 blocks
    // refsMatching reads ahead (values are decoded from the entries, not taken from the map). A
    // last partial block (tables of 4-16 slots) is PostingsIndexTest's.
    java.util.function.Predicate<String> matches = v -> v.endsWith("1") || v.endsWith("35");
    List<String> expected = new ArrayList<>();
    reference.forEach((k, v) -> {
      if (matches.test(k)) {
        expected.add(java.util.Arrays.toString(v instanceof MemSeries s ? new int[] {s.ref()}
            : ((PostingList) v).snapshot()));
      }
    });
    assertThat(m.refsMatching(matches).stream().map(java.util.Arrays::toString).toList())
        .hasSizeGreaterThan(500).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(m.refsMatching(PostingsSource.ANY)).hasSize(reference.size());
    long lists = reference.values().stream().filter(e -> e instanceof PostingList)
        .mapToLong(e -> ValueMap.arrayBytes(((PostingList) e).value().length)).sum();
    assertThat(m.keyBytes()).as("only the lists' values are the map's").isEqualTo(lists).isPositive();
  }

  /**
   * Values with equal hashes are told apart by their bytes, whether the entry is a series or a
   * list, and so are an empty value, non-ASCII values and a name stored in full in the series
   * (longer than the dictionary takes, after another such name). A lone surrogate finds nothing,
   * not the value "?".
   */
  @Test
  void equalHashesEmptyAndNonAsciiValuesAndAFullNameAreToldApart() {
    String longName = "n".repeat(LabelNames.MAX_NAME_BYTES + 1);
    List<String[]> pairs = collidingPairs();
    assertThat(pairs).as("colliding pairs found").hasSizeGreaterThanOrEqualTo(2);
    List<String> valueList = new ArrayList<>(List.of("", "caf\u00e9", "caf\u00e8", "\u65e5\u672c", "?", "decoy0"));
    for (String[] p : pairs) {
      valueList.add(p[0]);
      valueList.add(p[1]);
    }
    String[] values = valueList.toArray(String[]::new);
    for (String name : new String[] {"pod", longName}) {
      ValueMap m = map(name);
      Map<String, Object> reference = new HashMap<>();
      for (int i = 0; i < values.length; i++) {
        Object e = i % 2 == 0 ? series(i + 1, name, values[i]) : list(values[i], i + 1, i + 100);
        put(m, values[i], e);
        reference.put(values[i], e);
      }
      reference.forEach((k, v) -> assertThat(m.get(new String(k))).as(k).isSameAs(v));
      assertThat(m.get("decoy")).as("another label's value").isNull();
      assertThat(m.get("\ud800")).as("a lone surrogate").isNull();
      assertThat(m.get("c" + 300_001)).isNull();
      assertThat(m.values()).containsExactlyInAnyOrder(values);
      // Each pair's second value, asked for while only the first is in a fresh map, is not found.
      ValueMap firsts = map(name);
      for (String[] p : pairs) {
        put(firsts, p[0], series(1, name, p[0]));
        assertThat(firsts.get(p[1])).as("%s against %s", p[1], p[0]).isNull();
      }
    }
  }

  @Test
  void removalAsksOncePerValueKeepsTheRestAndShrinks() {
    ValueMap m = map("pod");
    for (int i = 0; i < 1_000; i++) {
      put(m, "v" + i, i % 2 == 0 ? series(i + 1, "pod", "v" + i) : list("v" + i, i + 1));
    }
    Map<Object, Integer> asked = new HashMap<>();
    m.removeIf(e -> {
      asked.merge(e, 1, Integer::sum);
      int ref = e instanceof MemSeries s ? s.ref() : ((PostingList) e).snapshot()[0];
      return ref > 10;
    });
    assertThat(asked).hasSize(1_000).allSatisfy((k, n) -> assertThat(n).isEqualTo(1));
    assertThat(m.size()).isEqualTo(10);
    assertThat(m.values()).containsExactlyInAnyOrder("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
    assertThat(m.get("v9")).isInstanceOf(PostingList.class);
    assertThat(m.get("v8")).isInstanceOf(MemSeries.class);
    assertThat(m.get("v10")).isNull();
    assertThat(m.tableBytes()).as("shrunk to 32 slots").isEqualTo(2 * (16 + 4L * 32));
    assertThat(m.keyBytes()).as("five lists of two-byte values left").isEqualTo(5 * ValueMap.arrayBytes(2));
    m.removeIf(e -> false);
    assertThat(m.size()).isEqualTo(10);
    m.removeIf(e -> true);
    assertThat(m.isEmpty()).isTrue();
    assertThat(m.values()).isEmpty();
    assertThat(m.keyBytes()).isZero();
    put(m, "again", series(1, "pod", "again"));
    assertThat(m.get("again")).isNotNull();
  }

  /**
   * One writer adds values (growing the table many times), turns series into lists and removes
   * some, while readers look up values the writer finished adding: a reader must find every value
   * added before it looked and not removed, with its series or the list that replaced it.
   */
  @Test
  void readersFindEveryPublishedValueWhileOneWriterGrowsReplacesAndRemoves() throws Exception {
    int n = 200_000;
    ValueMap m = map("pod");
    AtomicInteger published = new AtomicInteger(); // values 0..published-1 are in the map
    AtomicInteger removedBelow = new AtomicInteger(); // values below it may be gone
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> readers = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      Thread t = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        try {
          while (published.get() < n) {
            int p = published.get();
            int low = removedBelow.get();
            if (p <= low) {
              continue;
            }
            int k = low + rnd.nextInt(p - low);
            Object e = m.get("value-" + k);
            if (e == null && k < removedBelow.get()) {
              continue; // removed after this reader picked it
            }
            int first = e instanceof MemSeries s ? s.ref() : e instanceof PostingList l ? l.snapshot()[0] : -1;
            if (first != k + 1) {
              throw new AssertionError("value-" + k + " (published " + p + ") -> " + e);
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      t.start();
      readers.add(t);
    }
    for (int k = 0; k < n; k++) {
      MemSeries s = series(k + 1, "pod", "value-" + k);
      m.insert(hash("value-" + k), s);
      published.set(k + 1);
      if (k % 3 == 0) {
        m.replace(hash("value-" + k), s, list("value-" + k, k + 1, n + k + 1));
      }
      if (k > 0 && k % 50_000 == 0) {
        int below = k - 40_000;
        removedBelow.set(below); // readers stop asking for them before they go
        m.removeIf(e -> (e instanceof MemSeries s1 ? s1.ref() : ((PostingList) e).snapshot()[0]) <= below);
      }
    }
    for (Thread t : readers) {
      t.join(120_000);
    }
    assertThat(failure.get()).isNull();
    assertThat(m.size()).isEqualTo(n - 110_000);
  }
}
