package dev.weir.storage.bench;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.HeadOptions;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
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
 * Decoding a remote-write request of 2000 series (one sample each, ~10 labels) into the head's
 * series, steady state (every series exists): protobuf objects and label Strings (the generic
 * path) against the byte-level reader that finds series by their label bytes (the hot path of
 * pushes and the Kafka reader). Scores are samples/s; the {@code ...Append} variants include the
 * head commit (no WAL).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class DecodeBenchmark {
  static final int BATCH = 2000;

  @Param({"100000"})
  int numSeries;

  private TenantHead head;
  private byte[][] requests;
  private int next;
  /** Times every request was taken: the scrape round, for timestamps that move forward. */
  private long rounds;
  private final WireSeries cursor = new WireSeries();

  @Setup(Level.Trial)
  public void setUp() {
    head = new TenantHead("bench", HeadConfig.DEFAULT, HeadOptions.inMemory(() -> 0));
    Appender app = head.appender();
    requests = new byte[numSeries / BATCH][];
    for (int r = 0; r < requests.length; r++) {
      WriteRequest.Builder b = WriteRequest.newBuilder();
      for (int i = r * BATCH; i < (r + 1) * BATCH; i++) {
        Labels l = BenchData.series(i);
        app.add(app.series(l), 0, i);
        TimeSeries.Builder ts = TimeSeries.newBuilder();
        l.forEach((n, v) -> ts.addLabels(Label.newBuilder().setName(n).setValue(v)));
        b.addTimeseries(ts.addSamples(Sample.newBuilder().setTimestamp(15_000).setValue(i)));
      }
      requests[r] = b.build().toByteArray();
    }
    app.commit(false);
  }

  private byte[] nextRequest() {
    byte[] r = requests[next++];
    if (next == requests.length) {
      next = 0;
      rounds++;
    }
    return r;
  }

  /** protobuf-java objects, then sorted label Strings and a map lookup per series. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int protobufDecodeAndLookup() throws Exception {
    WriteRequest req = WriteRequest.parseFrom(nextRequest());
    int found = 0;
    for (TimeSeries ts : req.getTimeseriesList()) {
      String[] pairs = new String[ts.getLabelsCount() * 2];
      for (int i = 0; i < ts.getLabelsCount(); i++) {
        pairs[2 * i] = ts.getLabels(i).getName();
        pairs[2 * i + 1] = ts.getLabels(i).getValue();
      }
      Labels.sortPairs(pairs);
      if (head.get(Labels.ofSortedPairs(pairs)) != null) {
        found++;
      }
    }
    return found;
  }

  /**
   * The byte-level reader alone, as the Kafka reader's decoding thread runs it: structure check,
   * label positions and hashes of every series (no lookup).
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int wireParse() {
    return WireBatch.parse(nextRequest(), cursor).hash(BATCH - 1);
  }

  /** The byte-level reader: structure check and label hashes, then a lookup by label bytes per series. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int wireDecodeAndLookup() {
    WireBatch b = WireBatch.parse(nextRequest(), cursor);
    int found = 0;
    for (int i = 0; i < b.size(); i++) {
      if (head.getByKey(b.read(i, cursor).key()) != null) {
        found++;
      }
    }
    return found;
  }

  /** {@link #wireDecodeAndLookup} with each block of 64 lookups warmed first ({@link Appender#warmLookups}). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int wireDecodeAndLookupWarmed() {
    WireBatch b = WireBatch.parse(nextRequest(), cursor);
    java.util.function.IntUnaryOperator hashes = b::hash;
    int found = 0;
    for (int i = 0; i < b.size(); i++) {
      if (i % 64 == 0) {
        found += head.warmLookups(hashes, i, Math.min(b.size(), i + 64)) == 42 ? 1 : 0;
      }
      if (head.getByKey(b.read(i, cursor).key()) != null) {
        found++;
      }
    }
    return found;
  }

  /** The byte-level reader plus the head commit (order checks, XOR chunks; no WAL). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int wireDecodeAndAppend() {
    WireBatch b = WireBatch.parse(nextRequest(), cursor);
    Appender app = head.appender();
    for (int i = 0; i < b.size(); i++) {
      WireSeries ws = b.read(i, cursor);
      MemSeries s = head.getByKey(ws.key());
      for (int k = 0; k < ws.samples(); k++) {
        app.add(s, ws.timestamp(k) + (long) next * 0, ws.value(k));
      }
    }
    return app.commit(false).appended() + app.size();
  }

  /**
   * The steady state of a push or a Kafka record: decode, warm each block of 64 lookups, find
   * every series and append its sample one scrape interval after the last (XOR chunks that grow
   * and are cut every 120 samples), commit (no WAL).
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int wireDecodeWarmedAndAppend() {
    long t = 15_000L * (rounds + 2); // before nextRequest: the whole request in one round
    WireBatch b = WireBatch.parse(nextRequest(), cursor);
    java.util.function.IntUnaryOperator hashes = b::hash;
    Appender app = head.appender();
    for (int i = 0; i < b.size(); i++) {
      if (i % 64 == 0) {
        head.warmLookups(hashes, i, Math.min(b.size(), i + 64));
      }
      WireSeries ws = b.read(i, cursor);
      app.add(head.getByKey(ws.key()), t, ws.value(0) + rounds);
    }
    return app.commit(false).appended();
  }
}
