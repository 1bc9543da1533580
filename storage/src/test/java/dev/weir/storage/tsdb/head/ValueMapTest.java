package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ValueMapTest {
  @Test
  void putGetReplaceAndIterateLikeAMapThroughGrowth() {
    ValueMap m = new ValueMap();
    Map<String, Object> reference = new HashMap<>();
    for (int i = 0; i < 5_000; i++) {
      String k = "pod-" + i;
      m.put(new String(k), i); // an equal string, not the same one: lookups compare by value
      reference.put(k, i);
      if (i % 7 == 0) {
        m.put("pod-" + (i / 2), -i); // replaces an entry
        reference.put("pod-" + (i / 2), -i);
      }
    }
    assertThat(m.size()).isEqualTo(reference.size());
    reference.forEach((k, v) -> assertThat(m.get(new String(k))).as(k).isEqualTo(v));
    assertThat(m.get("pod-5000")).isNull();
    assertThat(m.get("")).isNull();
    assertThat(m.values()).hasSize(reference.size()).containsExactlyInAnyOrderElementsOf(reference.keySet());
    assertThat(m.tableBytes()).as("load at most one half").isEqualTo(2 * (16 + 4L * 16_384));
  }

  @Test
  void removalAsksOncePerValueKeepsTheRestAndShrinks() {
    ValueMap m = new ValueMap();
    for (int i = 0; i < 1_000; i++) {
      m.put("v" + i, i);
    }
    Map<String, Integer> asked = new HashMap<>();
    m.removeIf((k, v) -> {
      asked.merge(k, 1, Integer::sum);
      return (Integer) v >= 10;
    });
    assertThat(asked).hasSize(1_000).allSatisfy((k, n) -> assertThat(n).isEqualTo(1));
    assertThat(m.size()).isEqualTo(10);
    assertThat(m.values()).containsExactlyInAnyOrder("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
    assertThat(m.get("v9")).isEqualTo(9);
    assertThat(m.get("v10")).isNull();
    assertThat(m.tableBytes()).as("shrunk to 32 slots").isEqualTo(2 * (16 + 4L * 32));
    m.removeIf((k, v) -> false);
    assertThat(m.size()).isEqualTo(10);
    m.removeIf((k, v) -> true);
    assertThat(m.isEmpty()).isTrue();
    assertThat(m.values()).isEmpty();
    m.put("again", 1);
    assertThat(m.get("again")).isEqualTo(1);
  }

  /**
   * One writer adds values (growing the table many times), replaces entries and removes some,
   * while readers look up values the writer finished adding: a reader must find every value added
   * before it looked and not removed, with its latest entry or one stored before it.
   */
  @Test
  void readersFindEveryPublishedValueWhileOneWriterGrowsReplacesAndRemoves() throws Exception {
    int n = 200_000;
    ValueMap m = new ValueMap();
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
            if (!(e instanceof Integer v) || (v != k && v != -k)) {
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
      m.put("value-" + k, k);
      published.set(k + 1);
      if (k % 3 == 0) {
        m.put("value-" + k, -k);
      }
      if (k > 0 && k % 50_000 == 0) {
        int below = k - 40_000;
        removedBelow.set(below); // readers stop asking for them before they go
        m.removeIf((key, e) -> Integer.parseInt(key.substring(6)) < below);
      }
    }
    for (Thread t : readers) {
      t.join(120_000);
    }
    assertThat(failure.get()).isNull();
    assertThat(m.size()).isEqualTo(n - 110_000);
  }
}
