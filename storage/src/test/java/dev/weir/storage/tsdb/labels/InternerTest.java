package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class InternerTest {
  @Test
  void internInPlacePutsTheSharedStringsInTheLabelsOwnArray() {
    Interner interner = new Interner();
    Labels first = interner.intern(Labels.of("__name__", "up", "pod", new String("p-1")));
    Labels second = Labels.of("__name__", new String("up"), "pod", new String("p-1"));
    int hash = second.hashCode();
    String[] array = second.pairsUnsafe();
    assertThat(interner.internInPlace(second)).isSameAs(second).isEqualTo(first).hasSameHashCodeAs(first);
    assertThat(second.hashCode()).isEqualTo(hash);
    assertThat(second.pairsUnsafe()).isSameAs(array);
    for (int i = 0; i < array.length; i++) {
      assertThat(array[i]).isSameAs(first.pairsUnsafe()[i]);
    }
    assertThat(interner.refs("p-1")).isEqualTo(2);
    interner.release(second);
    interner.release(first);
    assertThat(interner.size()).isZero();
  }

  @Test
  void equalStringsShareOneInstanceUntilTheLastHolderReleases() {
    Interner interner = new Interner();
    String first = interner.intern(new String("pod-1234"));
    String second = interner.intern(new String("pod-1234"));
    assertThat(second).isSameAs(first);
    assertThat(interner.size()).isEqualTo(1);
    assertThat(interner.bytesEstimate()).isEqualTo(Interner.PER_STRING_BYTES + 8);

    interner.release("pod-1234");
    assertThat(interner.refs("pod-1234")).isEqualTo(1);
    assertThat(interner.intern(new String("pod-1234"))).isSameAs(first);
    interner.release("pod-1234");
    interner.release("pod-1234");
    assertThat(interner.size()).isZero();
    assertThat(interner.bytesEstimate()).isZero();
    String again = new String("pod-1234");
    assertThat(interner.intern(again)).isSameAs(again).isNotSameAs(first);
  }

  @Test
  void releasingAStringNeverInternedChangesNothing() {
    Interner interner = new Interner();
    interner.intern("a");
    interner.release("b");
    assertThat(interner.size()).isEqualTo(1);
    assertThat(interner.refs("a")).isEqualTo(1);
  }

  /**
   * Random interns and releases against a plain map as the model: deleting from the middle of a
   * probe run (backward shift), growing and shrinking must never lose or duplicate an entry.
   * Strings that collide in a stripe's low bits are made likely by a small alphabet.
   */
  @Test
  void churnMatchesAPlainMapOfCounts() {
    Interner interner = new Interner();
    Map<String, Integer> model = new HashMap<>();
    Map<String, String> instances = new HashMap<>();
    Random rnd = new Random(7);
    for (int step = 0; step < 400_000; step++) {
      String s = "v" + rnd.nextInt(step < 200_000 ? 20_000 : 500);
      if (rnd.nextInt(3) > 0 || !model.containsKey(s)) {
        String got = interner.intern(new String(s));
        String before = instances.putIfAbsent(s, got);
        if (before != null) {
          assertThat(got).isSameAs(before);
        }
        model.merge(s, 1, Integer::sum);
      } else {
        interner.release(s);
        if (model.merge(s, -1, Integer::sum) == 0) {
          model.remove(s);
          instances.remove(s);
        }
      }
    }
    assertThat(interner.size()).isEqualTo(model.size());
    long chars = 0;
    for (Map.Entry<String, Integer> e : model.entrySet()) {
      assertThat(interner.refs(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
      chars += e.getKey().length();
    }
    assertThat(interner.bytesEstimate()).isEqualTo(model.size() * (long) Interner.PER_STRING_BYTES + chars);
    // Release everything: the table empties completely.
    for (Map.Entry<String, Integer> e : model.entrySet()) {
      for (int i = 0; i < e.getValue(); i++) {
        interner.release(e.getKey());
      }
    }
    assertThat(interner.size()).isZero();
    assertThat(interner.bytesEstimate()).isZero();
  }

  @Test
  void concurrentInternsOfTheSameStringsAgreeOnOneInstance() throws Exception {
    Interner interner = new Interner();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String[]>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        results.add(pool.submit(() -> {
          String[] got = new String[50_000];
          for (int i = 0; i < got.length; i++) {
            got[i] = interner.intern(new String("value-" + i));
          }
          return got;
        }));
      }
      String[] first = results.get(0).get();
      for (Future<String[]> f : results) {
        String[] got = f.get();
        for (int i = 0; i < got.length; i++) {
          assertThat(got[i]).isSameAs(first[i]);
        }
      }
      assertThat(interner.size()).isEqualTo(50_000);
      assertThat(interner.refs("value-49999")).isEqualTo(4);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void internedLabelsReleaseEveryString() {
    Interner interner = new Interner();
    Labels a = interner.intern(Labels.of("__name__", "up", "job", "api"));
    Labels b = interner.intern(Labels.of("__name__", "up", "job", "db"));
    assertThat(a.value(0)).isSameAs(b.value(0));
    interner.release(a);
    assertThat(interner.refs("api")).isZero();
    assertThat(interner.refs("up")).isEqualTo(1);
    interner.release(b);
    assertThat(interner.size()).isZero();
  }
}
