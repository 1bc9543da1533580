package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.ProcStats;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.testing.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory of a start-up catch-up with concurrent fetchers (issue 19): an ingester consuming a
 * backlog of ~150 MB with {@code fetch-concurrency-max=4} and {@code max-buffered-bytes} 16 MiB,
 * with the JVM options of {@code bin/weir} in a 1 GiB memory limit ({@code -XX:MaxRAM=1g}, as a
 * pod's limit is seen by the JVM: {@code MaxRAMPercentage=50} gives a 512 MiB heap ceiling).
 *
 * <p>The floor is the peak RSS of the same process (same JVM options, flags and data dir) once
 * ready on the still empty partition: code, metaspace, threads, GC structures, clients. Peaks are
 * the kernel's {@code VmHWM}, so no short peak is missed and nothing depends on timing. Checked:
 *
 * <ul>
 *   <li>the live heap the catch-up leaves (after a full GC, less the empty process's) is what the
 *       head estimate says, from −10 % to +20 % (the tenant's WAL writer and metrics are not in
 *       the estimate): the estimate the bounds are written in is honest;
 *   <li>peak RSS ≤ floor + 1.1 × the heap ceiling (10 % for G1's own structures and compiled
 *       code, which grow with the heap): memory outside the heap (direct buffers, threads) does
 *       not grow with the backlog, and the catch-up completes inside the heap ceiling
 *       ({@code -XX:+ExitOnOutOfMemoryError} would end the process);
 *   <li>every produced sample is found, so no bound can be met by consuming nothing.
 * </ul>
 *
 * The goal of issue 19, peak RSS ≤ floor + 1.1 × (head estimate + max-buffered-bytes), is printed
 * but not asserted: G1 sizes the heap by GC time, not by the live set, and during a catch-up it
 * grows the heap well past the live set (docs/operations.md, "Memory of an ingester"; figures in
 * docs/benchmarks.md).
 */
class CatchUpMemoryIT {
  static final int SERIES = 50_000;
  static final int SAMPLES = 12;
  /** Series per request; each request is cut into records of at most {@link #RECORD_BYTES}. */
  static final int PER_REQUEST = 10_000;
  /** ~1,200 records: above the 1,000 records of backlog from which the fetchers start. */
  static final int RECORD_BYTES = 128 << 10;
  static final long MAX_BUFFERED_BYTES = 16L << 20;
  static final int FETCHERS = 4;
  static final long HEAP_CEILING = 512L << 20;
  /**
   * What may grow outside the heap with the heap's size: G1's remembered sets and card tables
   * (NMT "GC": ~5.5 % of the committed heap measured) and code compiled during the catch-up.
   */
  static final double NON_HEAP_ALLOWANCE = 0.1;
  static final String TENANT = "rss";

  @TempDir Path dir;

  /** The live heap after a full GC: its bytes and the histogram's largest classes (for messages). */
  private record LiveHeap(long bytes, String largest) {}

  @Test
  void catchUpWithConcurrentFetchersStaysWithinHeadEstimateAndHeapCeiling() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    String[] flags = c.args("--target=ingester", "--ingester.id=ingester-zone-a-0",
        "--ingest-storage.kafka.consumer-group=rss-" + c.topic,
        "--ingest-storage.kafka.fetch-concurrency-max=" + FETCHERS,
        "--ingest-storage.kafka.max-buffered-bytes=" + MAX_BUFFERED_BYTES,
        "--ingest-storage.kafka.producer-max-record-size-bytes=" + RECORD_BYTES);
    List<String> jvm = new ArrayList<>(WeirProcess.launcherJvmOptions());
    jvm.add("-XX:MaxRAM=" + 2 * HEAP_CEILING);
    try (WeirProcess ing = WeirProcess.launch(dir, jvm, flags)) {
      // The floor: the same process ready with an empty head on the empty partition.
      ing.awaitReady(Duration.ofSeconds(60));
      long floor = ProcStats.peakRssBytes(ing.pid());
      long floorLive = liveHeap(ing.pid()).bytes();
      assertThat(ing.terminate(Duration.ofSeconds(30))).as("floor run exit code").isIn(0, 143);

      long[] backlog = produceBacklog(c);
      long samples = (long) SERIES * SAMPLES;

      // The catch-up: same command, same data dir; ready only once the partition is consumed.
      ing.relaunch();
      ing.awaitReady(Duration.ofSeconds(120));
      long peak = ProcStats.peakRssBytes(ing.pid());
      double head = ing.metric("weir_tsdb_head_memory_estimate_bytes");
      LiveHeap liveHeap = liveHeap(ing.pid());
      long live = liveHeap.bytes();
      double goal = floor + 1.1 * (head + MAX_BUFFERED_BYTES);
      String figures = String.format("backlog %d records, %.1f MB; floor: peak RSS %.1f MB, live heap %.1f MB;"
          + " catch-up: peak RSS %.1f MB, live heap %.1f MB; head estimate %.1f MB; max-buffered-bytes %.1f MB;"
          + " peak over floor %.1f MB = %.2f x (head + max-buffered-bytes); issue 19 goal %.1f MB (%s);"
          + " heap ceiling bound %.1f MB", backlog[0], backlog[1] / 1e6, floor / 1e6, floorLive / 1e6, peak / 1e6,
          live / 1e6, head / 1e6, MAX_BUFFERED_BYTES / 1e6, (peak - floor) / 1e6,
          (peak - floor) / (head + MAX_BUFFERED_BYTES), goal / 1e6, peak <= goal ? "met" : "not met",
          (floor + (1 + NON_HEAP_ALLOWANCE) * HEAP_CEILING) / 1e6);
      System.out.println("CatchUpMemoryIT: " + figures);
      System.out.println("CatchUpMemoryIT: live heap after the catch-up, largest classes:\n" + liveHeap.largest());

      // The catch-up went through the concurrent fetchers, and the head holds what was sent.
      assertThat(ing.log()).contains("msg=\"fetching the backlog concurrently\" partition=0 fetchers=" + FETCHERS);
      assertThat(ing.metric("weir_ingest_storage_reader_concurrent_fetch_records_total{partition=\"0\"}"))
          .as("records fetched concurrently").isPositive();
      assertThat(ing.metric("weir_ingester_ingested_samples_total{user=\"" + TENANT + "\"}"))
          .as("samples appended").isEqualTo((double) samples);

      // 1.02 x measured: the rest is the tenant's own state beside its head (WAL writer, metrics).
      assertThat((double) (live - floorLive)).as("live heap of the catch-up over the empty process's; %s; largest"
          + " classes:%n%s", figures, liveHeap.largest()).isBetween(0.9 * head, 1.2 * head);
      assertThat((double) peak).as(figures).isLessThanOrEqualTo(floor + (1 + NON_HEAP_ALLOWANCE) * HEAP_CEILING);

      Map<String, ExportClient.Series> found = new ExportClient(ing.httpUrl())
          .export(TENANT, "{__name__=~\"rss_.*\"}", "X-Read-Consistency", "strong");
      assertThat(found).hasSize(SERIES);
      assertThat(found.values().stream().mapToLong(s -> s.timestamps().size()).sum())
          .as("samples found").isEqualTo(samples);
    }
  }

  /** The objects alive in the process's heap: {@code jcmd GC.class_histogram} runs a full GC first. */
  private static LiveHeap liveHeap(long pid) throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
        String.valueOf(pid), "GC.class_histogram").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("jcmd finished").isTrue();
    Matcher m = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$").matcher(out);
    assertThat(m.find()).as("class histogram total in:%n%s", out).isTrue();
    return new LiveHeap(Long.parseLong(m.group(1)),
        out.lines().limit(25).collect(java.util.stream.Collectors.joining("\n")));
  }

  /**
   * {@link #SAMPLES} rounds over {@link #SERIES} series with 10 labels each, every record
   * acknowledged. Returns {records, request bytes}.
   */
  private long[] produceBacklog(KafkaCluster c) {
    // An hour old, and inside one 2 h block range, so that every run holds one chunk per series
    // and its figures compare. (Across a boundary every series has a second chunk: run in the
    // minutes before an even hour, this test found the estimate short of the closed chunks' arrays,
    // 1.21 x; MemSeries.chunkBytes counts them since, 1.02 x with a forced boundary.)
    long span = SAMPLES * 15_000L;
    long t0 = System.currentTimeMillis() - 3_600_000L;
    long boundary = (t0 + span) / 7_200_000L * 7_200_000L;
    if (boundary > t0) {
      t0 = boundary - span - 60_000L;
    }
    long records = 0;
    long bytes = 0;
    KafkaConfig kc = KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "producer").withMaxRecordSize(RECORD_BYTES);
    try (Writer w = new Writer(kc, WriterMetrics.noop())) {
      for (int k = 0; k < SAMPLES; k++) {
        for (int from = 0; from < SERIES; from += PER_REQUEST) {
          WriteRequest.Builder b = WriteRequest.newBuilder();
          for (int s = from; s < from + PER_REQUEST; s++) {
            b.addTimeseries(series(s, t0 + k * 15_000L, k * 1_000.0 + s % 977));
          }
          WriteRequest req = b.build();
          bytes += req.getSerializedSize();
          records = w.write(TENANT, Map.of(0, req)).get(0) + 1; // the offset of the last record
        }
      }
    }
    return new long[] {records, bytes};
  }

  /** A series shaped like a Kubernetes pod's: 10 labels, sorted by name. */
  private static TimeSeries series(int s, long ts, double v) {
    int pod = s / 50;
    List<String[]> labels = List.of(
        new String[] {"__name__", "rss_metric_" + (s % 25) + "_total"},
        new String[] {"cluster", "prod-eu-" + (s % 3)},
        new String[] {"container", "app-" + (pod % 40)},
        new String[] {"instance", "10.1." + (pod / 250) + "." + (pod % 250) + ":9100"},
        new String[] {"job", "kubernetes-pods-" + (s % 12)},
        new String[] {"method", s % 2 == 0 ? "GET" : "POST"},
        new String[] {"namespace", "team-" + (pod % 37)},
        new String[] {"pod", "app-" + (pod % 40) + "-" + Integer.toString(pod * 7919, 36)},
        new String[] {"series", Integer.toString(s)},
        new String[] {"status_code", String.valueOf(200 + s % 5)});
    TimeSeries.Builder b = TimeSeries.newBuilder();
    for (String[] l : labels) {
      b.addLabels(Label.newBuilder().setName(l[0]).setValue(l[1]));
    }
    return b.addSamples(Sample.newBuilder().setTimestamp(ts).setValue(v)).build();
  }
}
