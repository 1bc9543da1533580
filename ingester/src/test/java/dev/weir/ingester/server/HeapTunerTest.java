package dev.weir.ingester.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HeapTunerTest {
  static final long GB = 1L << 30;

  @Test
  void twoQuietIntervalsLowerTheRatiosAndOneBusyIntervalRestoresThem() {
    HeapTuner.Policy p = new HeapTuner.Policy(10, 30);
    // 1 GiB committed: quiet below 10.7 MB/s, busy above twice that.
    assertThat(p.observe(5_000_000, 1, GB)).as("one quiet interval is not enough").isNull();
    assertThat(p.observe(500_000_000, 1, GB)).as("a busy one starts the count again").isNull();
    assertThat(p.observe(5_000_000, 1, GB)).isNull();
    assertThat(p.observe(0, 5, GB)).containsExactly(5, 10);
    assertThat(p.quiet()).isTrue();
    assertThat(p.observe(0, 5, GB)).as("already quiet").isNull();
    assertThat(p.observe(15_000_000, 1, GB)).as("between the thresholds: stays quiet").isNull();
    assertThat(p.observe(25_000_000, 1, GB)).containsExactly(10, 30);
    assertThat(p.quiet()).isFalse();
  }

  @Test
  void quietRatiosNeverLoosenWhatTheProcessStartedWith() {
    HeapTuner.Policy p = new HeapTuner.Policy(0, 5);
    p.observe(0, 5, GB);
    assertThat(p.observe(0, 5, GB)).containsExactly(0, 5);
  }

  /** A fake JVM that records what the tuner does; {@code allocated[0]} is its allocation counter. */
  private static HeapTuner.Jvm recording(List<String> calls, long[] allocated) {
    return new HeapTuner.Jvm() {
      @Override
      public long allocatedBytes() {
        return allocated[0];
      }

      @Override
      public long committedHeapBytes() {
        return GB;
      }

      @Override
      public void setFreeRatios(int min, int max) {
        calls.add(min + "-" + max);
      }

      @Override
      public void collect() {
        calls.add("collect");
      }
    };
  }

  @Test
  void aConcurrentCycleStartsEveryTimeTheProcessBecomesQuiet() {
    List<String> calls = new ArrayList<>();
    long[] allocated = {0};
    try (HeapTuner t = new HeapTuner(recording(calls, allocated), new HeapTuner.Policy(10, 30), false)) {
      long s = 1_000_000_000L;
      allocated[0] = 500_000_000;
      t.tick(5 * s); // busy
      t.tick(10 * s);
      t.tick(15 * s); // two quiet intervals
      t.tick(20 * s);
      allocated[0] += 2 * GB;
      t.tick(25 * s); // busy
      t.tick(30 * s);
      t.tick(35 * s); // quiet again, 20 s later: a concurrent cycle costs no pause
      assertThat(calls).containsExactly("5-10", "collect", "10-30", "5-10", "collect");
    }
  }

  @Test
  void aFullCollectionRunsAtMostOncePerIntervalHoweverOftenTheLoadStops() {
    List<String> calls = new ArrayList<>();
    long[] allocated = {0};
    long s = 1_000_000_000L;
    try (HeapTuner t = new HeapTuner(recording(calls, allocated), new HeapTuner.Policy(10, 30), true)) {
      t.tick(5 * s);
      t.tick(10 * s); // quiet: the first full collection
      allocated[0] += 2 * GB;
      t.tick(15 * s); // busy
      t.tick(20 * s);
      t.tick(25 * s); // quiet again, 15 s after the collection: ratios only
      assertThat(calls).containsExactly("5-10", "collect", "10-30", "5-10");
      calls.clear();
      long later = 10 * s + HeapTuner.MIN_FULL_GC_INTERVAL_NANOS;
      t.tick(later - 15 * s); // still quiet
      allocated[0] += 2 * GB;
      t.tick(later - 10 * s); // busy
      t.tick(later - 5 * s);
      t.tick(later); // quiet, the interval after the first collection: collects again
      assertThat(calls).containsExactly("10-30", "5-10", "collect");
      calls.clear();
      allocated[0] += 2 * GB;
      t.tick(later + 5 * s);
      t.tick(later + 10 * s);
      t.tick(later + HeapTuner.MIN_FULL_GC_INTERVAL_NANOS - 5 * s); // quiet, just inside the interval
      assertThat(calls).containsExactly("10-30", "5-10");
    }
  }

  /**
   * What the tuner relies on, in a JVM started with {@code bin/jvm.options}' collector settings
   * (G1, a small initial heap, no {@code -XX:+ExplicitGCInvokesConcurrent}): after the quiet ratios
   * and {@link HeapTuner.Jvm#collect}, G1 keeps at most the quiet free share of the heap committed.
   */
  @Test
  void aFullCollectionShrinksTheHeapToTheQuietRatio() throws Exception {
    Process p = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:+UseG1GC", "-Xms64m", "-Xmx2g", "-XX:MinHeapFreeRatio=10", "-XX:MaxHeapFreeRatio=30",
        "-cp", System.getProperty("java.class.path"), ShrinkProbe.class.getName())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor()).as(out).isZero();
    String[] f = out.lines().reduce((a, b) -> b).orElseThrow().split(" ");
    long grown = Long.parseLong(f[0]);
    long committed = Long.parseLong(f[1]);
    long used = Long.parseLong(f[2]);
    long region = 32L << 20; // G1's largest region: the heap resizes in whole regions
    assertThat(grown).as("the heap held 352 MB").isGreaterThan(352L << 20);
    assertThat(used).as("the 96 MB still live, the garbage gone").isBetween(90L << 20, 128L << 20);
    assertThat(committed).as("committed %d for %d used, down from %d", committed, used, grown)
        .isLessThanOrEqualTo((long) (used / 0.9) + region)
        .isLessThan(grown / 2);
  }

  /**
   * {@link #aFullCollectionShrinksTheHeapToTheQuietRatio}'s JVM: 96 MB live and 256 MB of
   * garbage in 1 KB arrays; prints the committed heap with both, then committed and used after the collection.
   */
  public static final class ShrinkProbe {
    public static void main(String[] args) {
      HeapTuner.Jvm jvm = HeapTuner.hotspot(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class),
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean());
      java.lang.management.MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      // 1 KB arrays, three in eleven kept: the garbage shares its regions with live data, so only
      // a compacting collection (not a concurrent cycle's remark) can give those regions back.
      List<byte[]> live = new ArrayList<>();
      List<byte[]> held = new ArrayList<>();
      for (int i = 0; i < 352 * 1024; i++) {
        (i % 11 < 3 ? live : held).add(new byte[1000]);
      }
      jvm.collect();
      long grown = memory.getHeapMemoryUsage().getCommitted();
      held.clear();
      jvm.setFreeRatios(HeapTuner.QUIET_MIN_FREE, HeapTuner.QUIET_MAX_FREE);
      jvm.collect();
      java.lang.management.MemoryUsage after = memory.getHeapMemoryUsage();
      System.out.println(grown + " " + after.getCommitted() + " " + after.getUsed() + " " + live.size());
    }
  }

  /** The JVM's own flags move both ways (Min must never pass Max) and come back. */
  @Test
  void thisJvmTakesTheRatiosInEitherDirection() {
    HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    String min = hotspot.getVMOption("MinHeapFreeRatio").getValue();
    String max = hotspot.getVMOption("MaxHeapFreeRatio").getValue();
    HeapTuner.Jvm jvm = HeapTuner.hotspot(hotspot,
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean());
    try {
      jvm.setFreeRatios(5, 10);
      assertThat(hotspot.getVMOption("MinHeapFreeRatio").getValue()).isEqualTo("5");
      assertThat(hotspot.getVMOption("MaxHeapFreeRatio").getValue()).isEqualTo("10");
      jvm.setFreeRatios(40, 70);
      assertThat(hotspot.getVMOption("MinHeapFreeRatio").getValue()).isEqualTo("40");
      assertThat(hotspot.getVMOption("MaxHeapFreeRatio").getValue()).isEqualTo("70");
      jvm.setFreeRatios(5, 10);
      assertThat(jvm.allocatedBytes()).isPositive();
      assertThat(jvm.committedHeapBytes()).isPositive();
    } finally {
      jvm.setFreeRatios(Integer.parseInt(min), Integer.parseInt(max));
    }
    assertThat(hotspot.getVMOption("MinHeapFreeRatio").getValue()).isEqualTo(min);
    assertThat(hotspot.getVMOption("MaxHeapFreeRatio").getValue()).isEqualTo(max);
  }
}
