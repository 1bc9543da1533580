package dev.weir.storage.bench;

import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.chunk.XorIterator;
import java.util.Random;
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

/** XOR chunk encoding and decoding of a full 120-sample chunk; score: samples/s. */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChunkBenchmark {
  private final long[] ts = new long[120];
  private final double[] vs = new double[120];
  private byte[] chunk;

  @Setup
  public void setUp() {
    Random r = new Random(1);
    double v = 100;
    for (int i = 0; i < 120; i++) {
      ts[i] = 1_700_000_000_000L + i * 15_000L + r.nextInt(20) - 10;
      v = BenchData.value(r, v);
      vs[i] = v;
    }
    chunk = encode();
  }

  private byte[] encode() {
    XorAppender a = new XorAppender();
    for (int i = 0; i < 120; i++) {
      a.append(ts[i], vs[i]);
    }
    return a.bytes();
  }

  @Benchmark
  @OperationsPerInvocation(120)
  public byte[] encodeChunk() {
    return encode();
  }

  @Benchmark
  @OperationsPerInvocation(120)
  public double decodeChunk() {
    XorIterator it = new XorIterator(chunk);
    double sum = 0;
    while (it.next()) {
      sum += it.value() + it.timestamp();
    }
    return sum;
  }
}
