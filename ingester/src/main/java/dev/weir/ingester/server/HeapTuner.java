package dev.weir.ingester.server;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the heap near the live set while the process allocates slowly, and leaves G1 its room
 * while it allocates fast. G1 gives memory back only down to {@code MaxHeapFreeRatio} of free
 * heap (30 % in {@code bin/jvm.options}): at 1 M idle series that was ~300 MB of RSS above what
 * the head holds, while a tighter ratio under a heavy write load cost ~12 % of its throughput
 * (docs/benchmarks.md). Both ratios are manageable flags, so every {@link #INTERVAL_SECONDS} this
 * measures the allocation rate and, once it has been below {@link #QUIET_SHARE_PER_SECOND} of the
 * committed heap per second for two intervals in a row, sets the quiet ratios (5 % to 10 % free)
 * and collects, so that G1 resizes the heap to them:
 *
 * <ul>
 *   <li>without {@code -XX:+ExplicitGCInvokesConcurrent} (as in {@code bin/jvm.options})
 *       the collection is a full, compacting one: G1 then shrinks the heap to the live set plus the
 *       quiet free ratio. It pauses the process (about 0.3 s per 400 MB of live heap on two
 *       cores, docs/benchmarks.md), so it runs at most once per {@link #MIN_FULL_GC_INTERVAL_NANOS}
 *       (a process whose load comes and goes only lowers the ratios in between);
 *   <li>with it, a concurrent cycle, whose remark shrinks the heap only as far as the garbage not
 *       yet reclaimed lets it (at 1 M idle series about 70 MB more heap than after a full collection).
 * </ul>
 *
 * The first interval above twice that share restores the ratios the process started with.
 *
 * <p>Only with G1 (other collectors size their heaps differently) and unless
 * {@code -Dweir.heap.adaptive=false}. One daemon thread; {@link #close} stops it.
 */
public final class HeapTuner implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HeapTuner.class);
  /** The system property that turns it off ({@code false}). */
  public static final String PROPERTY = "weir.heap.adaptive";
  static final long INTERVAL_SECONDS = 5;
  /** Allocation per second, as a share of the committed heap, below which the process is quiet. */
  static final double QUIET_SHARE_PER_SECOND = 0.01;
  static final int QUIET_MIN_FREE = 5;
  static final int QUIET_MAX_FREE = 10;
  /** The least time between two full collections started by the tuner: 10 minutes. */
  static final long MIN_FULL_GC_INTERVAL_NANOS = 600_000_000_000L;

  /** What the tuner reads from and sets in the JVM (a fake in unit tests). */
  interface Jvm {
    /** Bytes allocated by all threads so far. */
    long allocatedBytes();

    long committedHeapBytes();

    void setFreeRatios(int min, int max);

    /** Collects: {@code System.gc()}, a full collection or a concurrent cycle by the JVM's flags. */
    void collect();
  }

  /** The decision part: quiet or busy from allocation rates, with hysteresis. Not thread-safe. */
  static final class Policy {
    private final int busyMin;
    private final int busyMax;
    /** Read by the gauge's thread too. */
    private volatile boolean quiet;
    private int quietIntervals;

    Policy(int busyMin, int busyMax) {
      this.busyMin = busyMin;
      this.busyMax = busyMax;
    }

    boolean quiet() {
      return quiet;
    }

    /**
     * Takes one interval's allocation and returns the ratios to set ({@code {min, max}}), or null
     * when nothing changes.
     */
    int @Nullable [] observe(long allocated, double seconds, long committed) {
      double share = committed <= 0 || seconds <= 0 ? 0 : allocated / seconds / committed;
      if (!quiet) {
        quietIntervals = share < QUIET_SHARE_PER_SECOND ? quietIntervals + 1 : 0;
        if (quietIntervals >= 2) {
          quiet = true;
          return new int[] {Math.min(QUIET_MIN_FREE, busyMin), Math.min(QUIET_MAX_FREE, busyMax)};
        }
      } else if (share > 2 * QUIET_SHARE_PER_SECOND) {
        quiet = false;
        quietIntervals = 0;
        return new int[] {busyMin, busyMax};
      }
      return null;
    }
  }

  private final Jvm jvm;
  private final Policy policy;
  /** Whether {@link Jvm#collect} is a full collection (so rate-limited), not a concurrent cycle. */
  private final boolean fullCollections;
  private final ScheduledExecutorService executor;
  private long lastAllocated;
  private long lastNanos;
  private boolean collectedFull;
  private long lastFullNanos;

  HeapTuner(Jvm jvm, Policy policy, boolean fullCollections) {
    this.jvm = jvm;
    this.policy = policy;
    this.fullCollections = fullCollections;
    this.executor = Executors.newSingleThreadScheduledExecutor(NamedThreads.factory("heap-tuner"));
  }

  /**
   * Starts a tuner for this JVM when it runs G1 and the property does not turn it off; null
   * otherwise (or when the JVM does not offer what it needs).
   */
  public static @Nullable HeapTuner startIfEnabled(MeterRegistry registry) {
    if ("false".equals(System.getProperty(PROPERTY))) {
      return null;
    }
    boolean g1 = ManagementFactory.getGarbageCollectorMXBeans().stream()
        .map(GarbageCollectorMXBean::getName).anyMatch(n -> n.startsWith("G1 "));
    java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    if (!g1 || !(threads instanceof com.sun.management.ThreadMXBean sunThreads)
        || !sunThreads.isThreadAllocatedMemorySupported()) {
      return null;
    }
    try {
      HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      int min = Integer.parseInt(hotspot.getVMOption("MinHeapFreeRatio").getValue());
      int max = Integer.parseInt(hotspot.getVMOption("MaxHeapFreeRatio").getValue());
      boolean concurrent = Boolean.parseBoolean(hotspot.getVMOption("ExplicitGCInvokesConcurrent").getValue());
      sunThreads.setThreadAllocatedMemoryEnabled(true);
      Jvm jvm = hotspot(hotspot, sunThreads);
      HeapTuner tuner = new HeapTuner(jvm, new Policy(min, max), !concurrent);
      Gauge.builder("weir.jvm.heap.tuner.quiet", tuner, t -> t.policy.quiet() ? 1 : 0)
          .description("1 while the heap tuner holds the heap near the live set (allocation is slow),"
              + " 0 while G1 has the free ratios the process started with.").register(registry);
      tuner.start();
      log.info("msg=\"heap tuner started\" busy_free_ratios={}-{} quiet_free_ratios={}-{} collection={}",
          min, max, Math.min(QUIET_MIN_FREE, min), Math.min(QUIET_MAX_FREE, max), concurrent ? "concurrent" : "full");
      return tuner;
    } catch (RuntimeException e) {
      log.warn("msg=\"heap tuner not started\" err=\"{}\"", e.toString());
      return null;
    }
  }

  /** This JVM through its management beans. */
  static Jvm hotspot(HotSpotDiagnosticMXBean hotspot, com.sun.management.ThreadMXBean threads) {
    return new Jvm() {
      @Override
      public long allocatedBytes() {
        return threads.getTotalThreadAllocatedBytes();
      }

      @Override
      public long committedHeapBytes() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
      }

      @Override
      public void setFreeRatios(int min, int max) {
        // The JVM refuses a Min above Max: lower Min first, or raise Max first.
        int curMin = Integer.parseInt(hotspot.getVMOption("MinHeapFreeRatio").getValue());
        if (min < curMin) {
          hotspot.setVMOption("MinHeapFreeRatio", Integer.toString(min));
          hotspot.setVMOption("MaxHeapFreeRatio", Integer.toString(max));
        } else {
          hotspot.setVMOption("MaxHeapFreeRatio", Integer.toString(max));
          hotspot.setVMOption("MinHeapFreeRatio", Integer.toString(min));
        }
      }

      @Override
      public void collect() {
        System.gc(); // concurrent with -XX:+ExplicitGCInvokesConcurrent, a full collection without
      }
    };
  }

  private void start() {
    lastAllocated = jvm.allocatedBytes();
    lastNanos = System.nanoTime();
    executor.scheduleWithFixedDelay(() -> {
      try {
        tick(System.nanoTime());
      } catch (RuntimeException e) {
        log.warn("msg=\"heap tuner failed\" err=\"{}\"", e.toString());
      }
    }, INTERVAL_SECONDS, INTERVAL_SECONDS, TimeUnit.SECONDS);
  }

  /** One interval: measures, decides, applies. */
  void tick(long nanos) {
    long allocated = jvm.allocatedBytes();
    double seconds = (nanos - lastNanos) / 1e9;
    int[] ratios = policy.observe(allocated - lastAllocated, seconds, jvm.committedHeapBytes());
    lastAllocated = allocated;
    lastNanos = nanos;
    if (ratios == null) {
      return;
    }
    jvm.setFreeRatios(ratios[0], ratios[1]);
    if (policy.quiet()) {
      boolean collect = !fullCollections || !collectedFull || nanos - lastFullNanos >= MIN_FULL_GC_INTERVAL_NANOS;
      log.info("msg=\"allocation is slow: heap free ratios lowered\" min_free={} max_free={} committed_bytes={} collect={}",
          ratios[0], ratios[1], jvm.committedHeapBytes(), collect ? (fullCollections ? "full" : "concurrent") : "no");
      if (collect) {
        if (fullCollections) {
          collectedFull = true;
          lastFullNanos = nanos;
        }
        long t0 = System.nanoTime();
        jvm.collect();
        if (fullCollections) {
          log.info("msg=\"heap compacted\" committed_bytes={} seconds={}", jvm.committedHeapBytes(),
              String.format("%.3f", (System.nanoTime() - t0) / 1e9));
        }
      }
    } else {
      log.info("msg=\"allocation is fast again: heap free ratios restored\" min_free={} max_free={}",
          ratios[0], ratios[1]);
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
