package dev.weir.ingester.bench;

import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.ReadResponse;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.xerial.snappy.Snappy;

/**
 * Querier latency over 24 hours of blocks ({@code bin/bench bucket-query}): the same twelve 2-hour
 * blocks (1,000 realistic series, a sample every 15 s: 5.76 M samples) sit in a filesystem bucket
 * served by a store-gateway, and in an ingester's data directory (loaded as its local blocks, head
 * empty). Two queriers, launcher JVM options, one over the store-gateway only and one over the
 * ingester only (both with the time window of their kind off: 0s), answer the same remote-read queries (SAMPLES) for the whole 24 hours: one series,
 * one metric name (~62 series), every series. Prints the median, p90 and max of the timed runs
 * after warm-up, and checks both paths return the same number of samples.
 *
 * <p>Options: {@code series=1000 runs=15 warmup=3}.
 */
public final class BucketQueryRunner {
  static final long HOUR = 3_600_000L;
  static final long STEP = 15_000;
  static final String TENANT = "anonymous";

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (String a : args) {
      String[] kv = a.split("=", 2);
      opts.put(kv[0], kv.length > 1 ? kv[1] : "true");
    }
    int series = Integer.parseInt(opts.getOrDefault("series", "1000"));
    int runs = Integer.parseInt(opts.getOrDefault("runs", "15"));
    int warmup = Integer.parseInt(opts.getOrDefault("warmup", "3"));
    Path work = Files.createTempDirectory("weir-bucket-query");
    try {
      run(work, series, runs, warmup);
    } finally {
      BlockWriter.deleteRecursively(work);
    }
  }

  static void run(Path work, int series, int runs, int warmup) throws Exception {
    long end = System.currentTimeMillis() / (2 * HOUR) * (2 * HOUR);
    long start = end - 24 * HOUR;
    List<Label[]> labels = labels(series);
    long t = System.nanoTime();
    writeBlocks(labels, start, end, work.resolve("ingester/data/tsdb/" + TENANT),
        new FilesystemBucket(work.resolve("bucket")));
    System.out.printf("wrote 12 blocks of %d series, %d samples each, in %.1f s (%s)%n", series, 24 * HOUR / STEP,
        (System.nanoTime() - t) / 1e9, work);
    List<String> jvm = CompareRunner.LAUNCHER_JVM;
    try (WeirProcess sg = WeirProcess.launch(work.resolve("sg"), jvm, "--target=store-gateway",
            "--blocks-storage.filesystem.dir=" + work.resolve("bucket"),
            "--blocks-storage.bucket-store.sync-dir=" + work.resolve("sg/sync"));
        WeirProcess ingester = WeirProcess.launch(work.resolve("ingester"), jvm, "--target=ingester",
            "--auth.multitenancy-enabled=false", "--blocks-storage.tsdb.ship-interval=0")) {
      sg.awaitReady(java.time.Duration.ofSeconds(120));
      ingester.awaitReady(java.time.Duration.ofSeconds(120));
      try (WeirProcess overBucket = WeirProcess.launch(work.resolve("q-bucket"), jvm, "--target=querier",
              "--auth.multitenancy-enabled=false", "--querier.store-gateway-addresses=" + sg.grpcTarget(),
              "--querier.query-store-after=0s");
          WeirProcess overIngester = WeirProcess.launch(work.resolve("q-ingester"), jvm, "--target=querier",
              "--auth.multitenancy-enabled=false", "--querier.ingester-addresses=" + ingester.grpcTarget(),
              "--querier.query-ingesters-within=0s")) {
        overBucket.awaitReady(java.time.Duration.ofSeconds(120));
        overIngester.awaitReady(java.time.Duration.ofSeconds(120));
        Map<String, LabelMatcher[]> queries = queries(labels.get(0));
        for (Map.Entry<String, LabelMatcher[]> q : queries.entrySet()) {
          ReadRequest req = request(start, end - 1, q.getValue());
          String a = measure(new RemoteClient(overBucket.httpUrl()), req, runs, warmup);
          String b = measure(new RemoteClient(overIngester.httpUrl()), req, runs, warmup);
          System.out.printf("%-28s bucket (store-gateway): %s | ingester local blocks: %s%n", q.getKey(), a, b);
        }
        System.out.printf("store-gateway bucket reads: %.0f chunk bytes, %.0f index bytes%n",
            sg.metric("weir_bucket_store_bucket_read_bytes_total{file=\"chunks\"}"),
            sg.metric("weir_bucket_store_bucket_read_bytes_total{file=\"index\"}"));
      }
    }
  }

  /** Timed remote reads: "median / p90 / max ms, samples"; fails when a run returns another count. */
  static String measure(RemoteClient client, ReadRequest req, int runs, int warmup) throws Exception {
    long samples = -1;
    double[] ms = new double[runs];
    for (int i = -warmup; i < runs; i++) {
      long t = System.nanoTime();
      RemoteClient.Response r = client.read(req);
      double took = (System.nanoTime() - t) / 1e6;
      if (r.status() != 200) {
        throw new IllegalStateException("remote read failed: " + r.status() + " " + r.text());
      }
      long n = 0;
      for (TimeSeries ts : ReadResponse.parseFrom(Snappy.uncompress(r.body())).getResults(0).getTimeseriesList()) {
        n += ts.getSamplesCount();
      }
      if (samples >= 0 && n != samples) {
        throw new IllegalStateException("runs returned " + samples + " and " + n + " samples");
      }
      samples = n;
      if (i >= 0) {
        ms[i] = took;
      }
    }
    Arrays.sort(ms);
    return String.format("%.0f / %.0f / %.0f ms, %d samples", ms[runs / 2], ms[(int) Math.ceil(runs * 0.9) - 1],
        ms[runs - 1], samples);
  }

  static Map<String, LabelMatcher[]> queries(Label[] first) {
    Map<String, LabelMatcher[]> q = new LinkedHashMap<>();
    LabelMatcher[] one = new LabelMatcher[first.length];
    for (int i = 0; i < first.length; i++) {
      one[i] = matcher(LabelMatcher.Type.EQ, first[i].getName(), first[i].getValue());
    }
    q.put("1 series", one);
    q.put("__name__=\"up\" (1/16)", new LabelMatcher[] {matcher(LabelMatcher.Type.EQ, "__name__", "up")});
    q.put("all series", new LabelMatcher[] {matcher(LabelMatcher.Type.RE, "__name__", ".+")});
    return q;
  }

  static LabelMatcher matcher(LabelMatcher.Type type, String name, String value) {
    return LabelMatcher.newBuilder().setType(type).setName(name).setValue(value).build();
  }

  static ReadRequest request(long start, long end, LabelMatcher... matchers) {
    Query.Builder q = Query.newBuilder().setStartTimestampMs(start).setEndTimestampMs(end);
    for (LabelMatcher m : matchers) {
      q.addMatchers(m);
    }
    return ReadRequest.newBuilder().addQueries(q).build();
  }

  static List<Label[]> labels(int series) {
    List<Label[]> out = new ArrayList<>();
    for (TimeSeries ts : new BenchData(series, 42).request(0, series, 0, 0).getTimeseriesList()) {
      out.add(ts.getLabelsList().toArray(Label[]::new));
    }
    return out;
  }

  /** Twelve 2-hour blocks in {@code localDir} (the ingester's tenant directory), each also uploaded. */
  static void writeBlocks(List<Label[]> labels, long start, long end, Path localDir, FilesystemBucket bucket)
      throws Exception {
    for (long from = start; from < end; from += 2 * HOUR) {
      List<SeriesChunks> all = new ArrayList<>();
      for (int i = 0; i < labels.size(); i++) {
        all.add(new SeriesChunks(toLabels(labels.get(i)), TestBlocks.chunks(samples(labels.get(i), i, from))));
      }
      all.sort((a, b) -> a.labels().compareTo(b.labels()));
      String id = Ulid.of(from, new byte[10]);
      BlockWriter.write(localDir, id, from, from + 2 * HOUR, all, "");
      bucket.upload(TENANT, id, localDir.resolve(id));
    }
  }

  /** A counter growing by a few per step, or a gauge wandering: XOR-compresses like real data. */
  static TreeMap<Long, Double> samples(Label[] labels, int i, long from) {
    boolean counter = labels[0].getValue().endsWith("_total") || labels[0].getValue().endsWith("_bucket");
    TreeMap<Long, Double> out = new TreeMap<>();
    for (long ts = from; ts < from + 2 * HOUR; ts += STEP) {
      long k = ts / STEP;
      out.put(ts, counter ? k * (1 + i % 7) * 3.0 : 100 + ((i * 31 + k * 17) % 1000) / 10.0);
    }
    return out;
  }

  static Labels toLabels(Label[] labels) {
    String[] pairs = new String[labels.length * 2];
    for (int i = 0; i < labels.length; i++) {
      pairs[2 * i] = labels[i].getName();
      pairs[2 * i + 1] = labels[i].getValue();
    }
    return Labels.of(pairs);
  }
}
