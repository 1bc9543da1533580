package dev.weir.storage.bench;

import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.HeadOptions;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Append throughput of the head on one thread: each operation commits one batch of one sample
 * per series (a scrape or remote-write request), with the series already known (steady state) —
 * lookup by labels, order check, XOR encoding. No WAL: that is measured separately.
 * Score is samples/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HeadAppendBenchmark {
  static final int BATCH = 2000;

  @Param({"100000"})
  int numSeries;

  private TenantHead head;
  private Labels[] labels;
  private long t;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    head = new TenantHead("bench", HeadConfig.DEFAULT, HeadOptions.inMemory(() -> 0));
    labels = new Labels[numSeries];
    Appender app = head.appender();
    for (int i = 0; i < numSeries; i++) {
      labels[i] = BenchData.series(i);
      app.add(app.series(labels[i]), 0, i);
    }
    app.commit(false);
    t = 15_000;
  }

  /** By labels, as a push arrives: hash and compare the label set, then append. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int appendBatchByLabels() {
    Appender app = head.appender();
    for (int i = 0; i < BATCH; i++) {
      int s = next++;
      if (next == numSeries) {
        next = 0;
        t += 15_000;
      }
      MemSeries series = app.series(labels[s]);
      app.add(series, t, s + t / 15_000.0);
    }
    return app.commit(false).appended();
  }
}
