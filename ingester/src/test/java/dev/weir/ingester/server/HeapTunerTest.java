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

  @Test
  void aTickSetsTheRatiosAndStartsACycleOnlyWhenItBecomesQuiet() {
    List<String> calls = new ArrayList<>();
    long[] allocated = {0};
    HeapTuner.Jvm jvm = new HeapTuner.Jvm() {
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
      public void startConcurrentCycle() {
        calls.add("cycle");
      }
    };
    try (HeapTuner t = new HeapTuner(jvm, new HeapTuner.Policy(10, 30), true)) {
      long s = 1_000_000_000L;
      allocated[0] = 500_000_000;
      t.tick(5 * s); // busy
      t.tick(10 * s);
      t.tick(15 * s); // two quiet intervals
      t.tick(20 * s);
      allocated[0] += 2 * GB;
      t.tick(25 * s); // busy
      assertThat(calls).containsExactly("5-10", "cycle", "10-30");
    }
    calls.clear();
    allocated[0] = 0;
    try (HeapTuner t = new HeapTuner(jvm, new HeapTuner.Policy(10, 30), false)) {
      t.tick(5_000_000_000L);
      t.tick(10_000_000_000L);
      assertThat(calls).as("without -XX:+ExplicitGCInvokesConcurrent: no System.gc()").containsExactly("5-10");
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
