package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.Rejection;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stress: writers append (floats, histograms, out-of-order, series that fall silent
 * for more than half a range and come back, churn) while the background thread compacts early
 * as often as it can; then a restart must find every acknowledged sample.
 */
class EarlyCompactionStressTest {
  private static final long RANGE = 60_000;
  @TempDir Path dir;

  private Tsdb open(EarlyCompaction.Config early) throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 4, 8))
        .withRetention(Duration.ZERO).withWalSegmentBytes(16 * 1024);
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(new SimpleMeterRegistry()), () -> 1_000, tenant -> () -> 0);
    t.earlyCompaction(early);
    t.outOfOrderWindows(tenant -> () -> 20_000);
    t.open();
    return t;
  }

  static NativeHistogram hist(long n) {
    return new NativeHistogram(false, NativeHistogram.RESET_UNKNOWN, 0, 1e-128, 0, 3.0 * n, 7.0 * n,
        new int[] {1, 3}, new double[] {n, n, n}, new int[0], new double[0], new double[0]);
  }

  @Test
  void everyAcknowledgedSampleSurvivesConcurrentEarlyCompactionsAndARestart() throws Exception {
    EarlyCompaction.Config always = new EarlyCompaction.Config(1, 0, 0, Duration.ofHours(1));
    Tsdb t = open(always);
    Map<String, Set<Long>> acked = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean();
    int writers = 2;
    int rounds = 900;
    // Rounds go on past `rounds` until more than 10 early compactions ran beside them (at most
    // 20 x as many rounds): how many fit in 900 rounds depends on how fast the appends are.
    AtomicInteger compactions = new AtomicInteger();
    AtomicInteger trips = new AtomicInteger();
    AtomicBoolean more = new AtomicBoolean(true);
    CyclicBarrier tick = new CyclicBarrier(writers, () -> {
      int done = trips.getAndIncrement();
      more.set(done < rounds || (compactions.get() <= 10 && done < 20 * rounds));
    });
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int w = 0; w < writers; w++) {
      int id = w;
      Thread th = new Thread(() -> {
        try {
          Random rnd = new Random(42 + id);
          int nSeries = 30;
          long[] last = new long[nSeries];
          int[] silentUntil = new int[nSeries];
          java.util.Arrays.fill(last, Long.MIN_VALUE);
          for (int round = 0; !stop.get(); round++) {
            tick.await();
            if (!more.get()) {
              break;
            }
            long now = round * 1_000L;
            Appender app = t.head("a").appender();
            List<Labels> sent = new ArrayList<>();
            List<Long> sentT = new ArrayList<>();
            for (int s = 0; s < nSeries; s++) {
              int gen = s < 10 ? round / 100 : 0; // churn for a third of the series
              boolean histogram = s % 7 == 3;
              Labels l = Labels.of("__name__", histogram ? "h" : "m", "w", String.valueOf(id), "s",
                  String.valueOf(s), "gen", String.valueOf(gen));
              if (round < silentUntil[s]) {
                continue;
              }
              if (rnd.nextInt(200) == 0) {
                silentUntil[s] = round + 31 + rnd.nextInt(20); // silent for more than half a range
              }
              long ts = now;
              if (!histogram && rnd.nextInt(10) == 0) {
                ts = now - 500 - 1_000L * rnd.nextInt(15); // out of order (x.500 s: never a duplicate)
              }
              if (histogram) {
                app.addHistogram(app.series(l), ts, hist(ts / 1000));
              } else {
                app.add(app.series(l), ts, ts + s);
              }
              sent.add(l);
              sentT.add(ts);
            }
            CommitResult r = app.commit(true);
            Set<String> refused = new HashSet<>();
            for (Rejection x : r.rejections()) {
              refused.add(x.series().labels() + "@" + x.timestamp());
            }
            for (int i = 0; i < sent.size(); i++) {
              if (!refused.contains(sent.get(i) + "@" + sentT.get(i))) {
                acked.computeIfAbsent(sent.get(i).toString(), k -> ConcurrentHashMap.newKeySet()).add(sentT.get(i));
              }
            }
          }
        } catch (Throwable e) {
          failures.add(e);
          stop.set(true);
          tick.reset();
        }
      });
      th.start();
      threads.add(th);
    }
    while (threads.stream().anyMatch(Thread::isAlive)) {
      compactions.addAndGet(t.compactEarlyIfOverThreshold());
    }
    for (Thread th : threads) {
      th.join();
    }
    assertThat(failures).isEmpty();
    assertThat(compactions.get()).isGreaterThan(10);
    Map<String, TreeSet<Long>> before = read(t);
    assertMissing("before the restart", acked, before);
    t.close();

    Tsdb again = open(always);
    Map<String, TreeSet<Long>> after = read(again);
    assertMissing("after the restart", acked, after);
    again.close();
  }

  private static void assertMissing(String when, Map<String, Set<Long>> acked, Map<String, TreeSet<Long>> got) {
    List<String> missing = new ArrayList<>();
    for (Map.Entry<String, Set<Long>> e : acked.entrySet()) {
      TreeSet<Long> g = got.getOrDefault(e.getKey(), new TreeSet<>());
      for (long x : new TreeSet<>(e.getValue())) {
        if (!g.contains(x)) {
          missing.add(e.getKey() + "@" + x);
        }
      }
    }
    assertThat(missing).as(when + ": acknowledged samples missing").isEmpty();
  }

  private static Map<String, TreeSet<Long>> read(Tsdb t) {
    Map<String, TreeSet<Long>> out = new TreeMap<>();
    long stored = 0;
    for (SeriesChunks s : t.tenant("a").select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      TreeSet<Long> ts = out.computeIfAbsent(s.labels().toString(), k -> new TreeSet<>());
      for (long x : s.samples(Long.MIN_VALUE, Long.MAX_VALUE).timestamps()) {
        ts.add(x);
      }
      for (long x : s.histograms(Long.MIN_VALUE, Long.MAX_VALUE).timestamps()) {
        ts.add(x);
      }
      for (ChunkData c : s.chunks()) {
        stored += Chunks.numSamples(c.encoding(), c.bytes());
      }
    }
    long distinct = out.values().stream().mapToLong(TreeSet::size).sum();
    System.out.println("early compaction stress: stored=" + stored + " distinct=" + distinct + " blocks=" + t.tenant("a").blocks().size());
    return out;
  }
}
