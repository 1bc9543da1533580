package dev.weir.storage.bench;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.ingest.RecordFormat;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
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
 * Kafka record format v1 against v2 on the distributor's produce path and the reader's decode
 * path: a 2,000-series write request (one sample per series, ~10 labels of {@link BenchData})
 * encoded into record values ({@link RecordFormat#encode}: what the distributor does before the
 * producer sends the bytes), and a record decoded and every series read ({@link
 * RecordFormat#decodeWire}). Scores are series/s. The record sizes are printed at setup
 * ({@code record bytes: ...}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RecordFormatBenchmark {
  static final int BATCH = 2000;
  static final int REQUESTS = 10;
  static final int MAX_RECORD = 15_983_616;

  @Param({"1", "2"})
  int version;

  private WriteRequest[] requests;
  private byte[][] records;
  private RecordHeaders headers;
  private int next;
  private final WireSeries cursor = new WireSeries();
  private static final byte[] KEY = "bench".getBytes(StandardCharsets.UTF_8);

  @Setup(Level.Trial)
  public void setUp() {
    requests = new WriteRequest[REQUESTS];
    records = new byte[REQUESTS][];
    long bytes = 0;
    for (int r = 0; r < REQUESTS; r++) {
      WriteRequest.Builder b = WriteRequest.newBuilder();
      for (int i = r * BATCH; i < (r + 1) * BATCH; i++) {
        Labels l = BenchData.series(i);
        TimeSeries.Builder ts = TimeSeries.newBuilder();
        l.forEach((n, v) -> ts.addLabels(Label.newBuilder().setName(n).setValue(v)));
        b.addTimeseries(ts.addSamples(Sample.newBuilder().setTimestamp(1_700_000_000_000L + r).setValue(i)));
      }
      requests[r] = b.build();
      List<byte[]> values = RecordFormat.encode(requests[r], version, MAX_RECORD);
      records[r] = values.get(0);
      bytes += records[r].length;
    }
    headers = new RecordHeaders(List.of(new RecordHeader(RecordFormat.VERSION_HEADER,
        Integer.toString(version).getBytes(StandardCharsets.UTF_8))));
    System.out.printf("record bytes: version=%d per-record=%d per-series=%.1f%n", version, bytes / REQUESTS,
        bytes / (double) (REQUESTS * BATCH));
  }

  private int advance() {
    int r = next;
    next = (next + 1) % REQUESTS;
    return r;
  }

  /** The distributor's side: a request into record values (v2: symbols interned per record). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int encode() {
    return RecordFormat.encode(requests[advance()], version, MAX_RECORD).size();
  }

  /** The reader's side: a record value decoded and every series' labels hashed and samples read. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long decodeAndRead() {
    WireBatch b = RecordFormat.decodeWire(KEY, records[advance()], headers, cursor).batch();
    long sum = 0;
    for (int i = 0; i < b.size(); i++) {
      WireSeries ws = b.read(i, cursor);
      sum += ws.labelsHash() + ws.timestamp(0);
    }
    return sum;
  }
}
