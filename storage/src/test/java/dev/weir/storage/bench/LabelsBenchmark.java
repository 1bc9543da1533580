package dev.weir.storage.bench;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The wire encoding a head keeps for each new series ({@link Labels#withWireEncoding}), as series
 * creation (push or WAL replay) builds it: 1024 {@link BenchData} series of 10 labels. Scores are
 * series/s.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LabelsBenchmark {
  static final int N = 1024;
  Labels[] series;

  @Setup
  public void setup() {
    series = new Labels[N];
    for (int i = 0; i < N; i++) {
      series[i] = BenchData.series(i * 7919);
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void withWireEncoding(Blackhole bh) {
    for (Labels l : series) {
      bh.consume(Labels.withWireEncoding(l));
    }
  }
}
