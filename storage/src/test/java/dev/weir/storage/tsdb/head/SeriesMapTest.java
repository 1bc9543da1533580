package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SeriesMapTest {
  static Labels labels(int i) {
    return Labels.of("__name__", "m", "i", Integer.toString(i));
  }

  @Test
  void churnMatchesAPlainMap() {
    SeriesMap map = new SeriesMap();
    Map<Labels, MemSeries> model = new HashMap<>();
    Random rnd = new Random(3);
    int ref = 1;
    for (int step = 0; step < 300_000; step++) {
      Labels l = labels(rnd.nextInt(step < 150_000 ? 40_000 : 300));
      MemSeries present = map.get(l);
      assertThat(present).isSameAs(model.get(l));
      if (present == null) {
        MemSeries s = new MemSeries(l, ref++);
        map.put(s);
        model.put(l, s);
      } else if (rnd.nextBoolean()) {
        map.remove(present);
        model.remove(l);
      }
    }
    assertThat(map.size()).isEqualTo(model.size());
    assertThat(new HashSet<>(map.snapshot())).isEqualTo(new HashSet<>(model.values()));
    assertThat(map.snapshot()).hasSize(model.size());
    for (int i = 0; i < 40_000; i++) {
      assertThat(map.get(labels(i))).isSameAs(model.get(labels(i)));
    }
    map.remove(new MemSeries(labels(-1), -1)); // absent: nothing changes
    assertThat(map.size()).isEqualTo(model.size());
    Labels kept = model.keySet().iterator().next();
    map.remove(new MemSeries(kept, -2)); // equal labels, another series: removal is by identity
    assertThat(map.get(kept)).isSameAs(model.get(kept));
  }

  /** A key that is not a Labels, as the wire decoder's are: the labels' hash, then their bytes. */
  @Test
  void findsByHashAndCanonicalBytes() {
    SeriesMap map = new SeriesMap();
    MemSeries s = new MemSeries(labels(7), 1);
    map.put(s);
    map.put(new MemSeries(labels(8), 2));
    byte[] want = labels(7).encoded().wireEncoding();
    assertThat(map.get(key(labels(7).hashCode(), want))).isSameAs(s);
    assertThat(map.get(labels(7))).as("plain Labels, encoded by the lookup").isSameAs(s);
    // The same hash with other bytes (a collision) and the right bytes under another hash: no match.
    assertThat(map.get(key(labels(7).hashCode(), labels(8).encoded().wireEncoding()))).isNull();
    assertThat(map.get(key(labels(7).hashCode() + 1, want))).isNull();
  }

  private static dev.weir.storage.tsdb.labels.SeriesKey key(int hash, byte[] canonical) {
    return new dev.weir.storage.tsdb.labels.SeriesKey() {
      @Override
      public int hashCode() {
        return hash;
      }

      @Override
      public boolean equals(Object o) {
        return this == o;
      }

      @Override
      public boolean matches(byte[] compact) {
        return java.util.Arrays.equals(dev.weir.storage.tsdb.labels.CompactLabels.toCanonical(compact), canonical);
      }
    };
  }

  /**
   * Readers never miss a series that stays in the map while a writer removes and adds others
   * around it: every series here has its home slot among the first four of the 64-slot table, so
   * they all share one long probe run and each removal moves stable series back. A stress check,
   * not a proof: the race window is a few nanoseconds, and with the retry taken out this test did
   * not catch a miss in the runs tried here (2 busy vCPUs); the seqlock's argument is in
   * {@link SeriesMap}'s comment.
   */
  @Test
  void concurrentReadersNeverMissAStableSeries() throws Exception {
    List<Labels> crowded = new ArrayList<>();
    for (int i = 0; crowded.size() < 30; i++) {
      if ((SeriesMap.spread(labels(i).hashCode()) & 63) < 4) {
        crowded.add(labels(i));
      }
    }
    SeriesMap map = new SeriesMap();
    // The churning series first, the stable ones after them at the end of the run: each removal
    // moves every stable series back by a slot.
    int ref = 1;
    for (int i = 0; i < 15; i++) {
      map.put(new MemSeries(crowded.get(i), ref++));
    }
    List<MemSeries> stable = new ArrayList<>();
    for (int i = 15; i < 30; i++) {
      MemSeries s = new MemSeries(crowded.get(i), ref++);
      map.put(s);
      stable.add(s);
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong misses = new AtomicLong();
    AtomicLong lookups = new AtomicLong();
    List<Thread> readers = new ArrayList<>();
    for (int r = 0; r < 1; r++) {
      Thread t = new Thread(() -> {
        Random rnd = new Random();
        while (!stop.get()) {
          MemSeries s = stable.get(rnd.nextInt(stable.size()));
          if (map.get(s.labels()) != s) {
            misses.incrementAndGet();
          }
          lookups.incrementAndGet();
        }
      });
      t.start();
      readers.add(t);
    }
    Random rnd = new Random(5);
    for (int round = 0; round < 500_000; round++) {
      Labels l = crowded.get(rnd.nextInt(15));
      MemSeries present = map.get(l);
      if (present == null) {
        map.put(new MemSeries(l, ref++));
      } else {
        map.remove(present);
      }
    }
    stop.set(true);
    for (Thread t : readers) {
      t.join();
    }
    assertThat(lookups.get()).isPositive();
    assertThat(misses.get()).as("lookups of present series that found nothing, of %d", lookups.get()).isZero();
    assertThat(map.snapshot()).containsAll(stable);
  }
}
