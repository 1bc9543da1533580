package dev.weir.storage.bench;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.AsciiHash;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
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
 * creation (push or WAL replay) builds it, and the labels' hash computed from their bytes as every
 * push, record and replayed series does ({@link AsciiHash} against the byte-at-a-time loop it
 * replaced): 1024 {@link BenchData} series of 8-12 labels. Scores are series/s.
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
  /** Every series' label names and values, one after the other. */
  byte[] bytes;
  /** Per series, per label: name offset, name length, value offset, value length; {@link #labelEnds} per series. */
  int[] positions;
  int[] labelEnds;

  @Setup
  public void setup() {
    series = new Labels[N];
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int[] pos = new int[N * 4 * 16];
    labelEnds = new int[N];
    int p = 0;
    for (int i = 0; i < N; i++) {
      series[i] = BenchData.series(i * 7919);
      for (int k = 0; k < series[i].size(); k++) {
        for (String s : new String[] {series[i].name(k), series[i].value(k)}) {
          byte[] b = s.getBytes(StandardCharsets.US_ASCII);
          pos[p++] = out.size();
          pos[p++] = b.length;
          out.writeBytes(b);
        }
      }
      labelEnds[i] = p;
    }
    bytes = out.toByteArray();
    positions = pos;
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void withWireEncoding(Blackhole bh) {
    for (Labels l : series) {
      bh.consume(Labels.withWireEncoding(l));
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void labelsHashOneByteAtATime(Blackhole bh) {
    byte[] b = bytes;
    int p = 0;
    for (int i = 0; i < N; i++) {
      int hash = 1;
      int bits = 0; // the ASCII check, as the loop it replaced made it
      for (int end = labelEnds[i]; p < end; p += 4) {
        int hn = 0;
        for (int j = positions[p], e = j + positions[p + 1]; j < e; j++) {
          byte c = b[j];
          bits |= c;
          hn = 31 * hn + c;
        }
        int hv = 0;
        for (int j = positions[p + 2], e = j + positions[p + 3]; j < e; j++) {
          byte c = b[j];
          bits |= c;
          hv = 31 * hv + c;
        }
        hash = 31 * (31 * hash + hn) + hv;
      }
      bh.consume(bits < 0 ? 0 : hash);
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void labelsHashAsciiHash(Blackhole bh) {
    byte[] b = bytes;
    int p = 0;
    for (int i = 0; i < N; i++) {
      int hash = 1;
      long bits = 0;
      for (int end = labelEnds[i]; p < end; p += 4) {
        long hn = AsciiHash.of(b, positions[p], positions[p + 1]);
        long hv = AsciiHash.of(b, positions[p + 2], positions[p + 3]);
        bits |= hn | hv;
        hash = 31 * (31 * hash + (int) hn) + (int) hv;
      }
      bh.consume(bits < 0 ? 0 : hash);
    }
  }
}
