package dev.weir.storage.bench;

import dev.weir.storage.tsdb.chunk.FloatHistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.FloatHistogramChunkIterator;
import dev.weir.storage.tsdb.chunk.HistogramChunkAppender;
import dev.weir.storage.tsdb.chunk.HistogramChunkIterator;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import java.util.ArrayList;
import java.util.List;
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

/**
 * Histogram chunk encoding and decoding of a typical request-latency histogram (schema 3, 20
 * buckets in two spans, a few hundred observations per 15 s scrape): 120 samples, cut into chunks
 * where the appender refuses (the 1 KiB target); score: samples/s. {@link #main} prints the
 * encoded bytes per sample.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HistogramChunkBenchmark {
  static final int SAMPLES = 120;
  private final long[] ts = new long[SAMPLES];
  private final List<NativeHistogram> ints = new ArrayList<>();
  private final List<NativeHistogram> floats = new ArrayList<>();
  private List<byte[]> intChunks = List.of();
  private List<byte[]> floatChunks = List.of();

  @Setup
  public void setUp() {
    Random r = new Random(1);
    double[] buckets = new double[20];
    double sum = 0;
    for (int i = 0; i < SAMPLES; i++) {
      ts[i] = 1_700_000_000_000L + i * 15_000L + r.nextInt(20) - 10;
      double count = 0;
      for (int b = 0; b < buckets.length; b++) {
        // Observations cluster around the middle buckets, as latencies do.
        int mean = Math.max(0, 40 - 4 * Math.abs(b - 10));
        buckets[b] += Math.max(0, Math.round(mean + r.nextGaussian() * Math.sqrt(mean + 1)));
        count += buckets[b];
      }
      sum += count * 0.05 + r.nextDouble();
      ints.add(histogram(false, buckets, count, sum));
      floats.add(histogram(true, buckets, count, sum));
    }
    intChunks = encodeInts();
    floatChunks = encodeFloats();
  }

  private static NativeHistogram histogram(boolean isFloat, double[] buckets, double count, double sum) {
    return new NativeHistogram(isFloat, NativeHistogram.RESET_UNKNOWN, 3, 0x1p-128, 0, count, sum,
        new int[] {-4, 12, 2, 8}, buckets.clone(), new int[0], new double[0], new double[0]);
  }

  /** All {@link #SAMPLES} samples, in as many chunks as the appender cuts. */
  private List<byte[]> encodeInts() {
    List<byte[]> out = new ArrayList<>();
    HistogramChunkAppender a = new HistogramChunkAppender();
    for (int i = 0; i < SAMPLES; i++) {
      if (!a.append(ts[i], ints.get(i))) {
        out.add(a.bytes());
        a = new HistogramChunkAppender();
        a.append(ts[i], ints.get(i));
      }
    }
    out.add(a.bytes());
    return out;
  }

  private List<byte[]> encodeFloats() {
    List<byte[]> out = new ArrayList<>();
    FloatHistogramChunkAppender a = new FloatHistogramChunkAppender();
    for (int i = 0; i < SAMPLES; i++) {
      if (!a.append(ts[i], floats.get(i))) {
        out.add(a.bytes());
        a = new FloatHistogramChunkAppender();
        a.append(ts[i], floats.get(i));
      }
    }
    out.add(a.bytes());
    return out;
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public List<byte[]> encodeIntegerChunks() {
    return encodeInts();
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public List<byte[]> encodeFloatChunks() {
    return encodeFloats();
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public double decodeIntegerChunks() {
    double acc = 0;
    for (byte[] c : intChunks) {
      HistogramChunkIterator it = new HistogramChunkIterator(c);
      while (it.next()) {
        acc += it.histogram().count() + it.timestamp();
      }
    }
    return acc;
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public double decodeFloatChunks() {
    double acc = 0;
    for (byte[] c : floatChunks) {
      FloatHistogramChunkIterator it = new FloatHistogramChunkIterator(c);
      while (it.next()) {
        acc += it.histogram().count() + it.timestamp();
      }
    }
    return acc;
  }

  private static String describe(List<byte[]> chunks) {
    int bytes = chunks.stream().mapToInt(c -> c.length).sum();
    return String.format("%d samples in %d chunks, %d bytes, %.1f bytes/sample", SAMPLES, chunks.size(), bytes,
        (double) bytes / SAMPLES);
  }

  /** Prints chunks and encoded bytes per sample of both encodings. */
  public static void main(String[] args) {
    HistogramChunkBenchmark b = new HistogramChunkBenchmark();
    b.setUp();
    System.out.println("integer histograms: " + describe(b.intChunks));
    System.out.println("float histograms: " + describe(b.floatChunks));
  }
}
