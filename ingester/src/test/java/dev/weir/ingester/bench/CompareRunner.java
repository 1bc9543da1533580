package dev.weir.ingester.bench;

import dev.weir.ingester.testing.Ports;
import dev.weir.ingester.testing.ProcStats;
import dev.weir.ingester.testing.PrometheusProcess;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.testing.KafkaBroker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.xerial.snappy.Snappy;

/**
 * The side-by-side benchmark ({@code bin/bench compare}): in one run on this machine,
 *
 * <ol>
 *   <li>HTTP remote write into Weir (classic mode, launcher defaults), Prometheus 2.42 and
 *       VictoriaMetrics 1.79, the same pre-encoded requests at the same concurrency;
 *   <li>RSS per active series after a million series, for the same three;
 *   <li>WAL replay and start-up of Weir's million-series head;
 *   <li>Kafka catch-up of a ≥1 GB one-partition backlog: Kafka's own consumer performance tool,
 *       Weir's pipelined reader (also with concurrent fetchers), and Weir's sequential loop, with
 *       the reader's pipeline bytes sampled against its bound;
 *   <li>end-to-end latency in Kafka mode (push → visible in a query) at half the sustainable load.
 * </ol>
 *
 * Prints every measurement and the ratios; the table in docs/benchmarks.md is copied from it.
 * Options: {@code series=100000 samples=40 connections=4 memorySeries=1000000 kafkaMb=1024
 * only=rw,mem,kafka,e2e systems=weir,weir-fsync-interval,prometheus,victoria concurrency=8
 * fetchConcurrency=4 batchSize=150 skipSequential=1 jfr=true nmt=true compression=lz4 weirJvm="..."} (a JFR
 * recording per Weir process and of the e2e phase's broker; native memory tracking's summary after
 * the remote write and memory phases; the codec of the Kafka phases' writer; more
 * JVM options for Weir).
 */
public final class CompareRunner {
  /** The JVM options bin/weir starts Weir with (bin/jvm.options), so the benchmark measures them. */
  static final List<String> LAUNCHER_JVM = WeirProcess.launcherJvmOptions();
  static final int PER_REQUEST = 2_000;
  static final long STEP = 15_000;

  final Map<String, String> opts = new LinkedHashMap<>();
  final List<String> report = new ArrayList<>();
  final Map<String, Double> values = new LinkedHashMap<>();
  Path work;
  /**
   * {@link #LAUNCHER_JVM} and the class data sharing archive bin/weir maps from its second start on
   * ({@code cds=false}: the launcher's options alone, as bin/weir's first start).
   */
  List<String> launcherJvm = LAUNCHER_JVM;
  /** The options of classic-mode Weir processes (remote write and memory phases): {@link #launcherJvm} or its own archive's. */
  List<String> classicJvm = LAUNCHER_JVM;

  public static void main(String[] args) throws Exception {
    CompareRunner r = new CompareRunner();
    for (String a : args) {
      String[] kv = a.split("=", 2);
      r.opts.put(kv[0], kv.length > 1 ? kv[1] : "true");
    }
    r.run();
  }

  int opt(String k, int def) {
    return opts.containsKey(k) ? Integer.parseInt(opts.get(k)) : def;
  }

  /** A switch: {@code k=true} (or {@code k=1}, or the key alone) turns it on, {@code k=false} off. */
  boolean on(String k) {
    String v = opts.get(k);
    return v != null && !v.equalsIgnoreCase("false") && !v.equals("0");
  }

  /** The launcher's JVM options, plus a JFR recording in {@code dir} with {@code jfr=true}. */
  List<String> jvm(Path dir) {
    return jvm(dir, launcherJvm);
  }

  /** As {@link #jvm(Path)}, from {@code base} instead of the launcher's options. */
  List<String> jvm(Path dir, List<String> base) {
    List<String> o = new ArrayList<>(base);
    if (on("jfr")) {
      o.add("-XX:StartFlightRecording=settings=profile,filename=" + dir.resolve("weir.jfr"));
    }
    if (on("nmt")) {
      o.add("-XX:NativeMemoryTracking=summary");
    }
    if (opts.containsKey("weirJvm")) {
      o.addAll(Arrays.asList(opts.get("weirJvm").trim().split("\\s+")));
    }
    return o;
  }

  /** The codec Weir's writer produces in the Kafka phases ({@code compression=}, default Weir's default). */
  String compression() {
    return opts.getOrDefault("compression", KafkaConfig.DEFAULT_COMPRESSION);
  }

  /** The systems compared ({@code systems=weir,weir-fsync-interval,prometheus,victoria} by default). */
  List<String> systems() {
    return Arrays.asList(opts.getOrDefault("systems", "weir,weir-fsync-interval,prometheus,victoria").split(","));
  }

  boolean phase(String p) {
    return !opts.containsKey("only") || Arrays.asList(opts.get("only").split(",")).contains(p);
  }

  void out(String line) {
    System.out.println(line);
    report.add(line);
  }

  void run() throws Exception {
    work = Files.createTempDirectory("weir-bench");
    out("# Weir side-by-side benchmark, " + LocalDate.now() + ", " + Runtime.getRuntime().availableProcessors()
        + " CPUs, work dir " + work);
    if (!"false".equals(opts.get("cds"))) {
      launcherJvm = WeirProcess.launcherJvmOptionsWithArchive(work.resolve("cds"));
      classicJvm = "kafka".equals(opts.get("cds")) ? launcherJvm
          : WeirProcess.launcherJvmOptionsWithClassicArchive(work.resolve("cds"));
      if (classicJvm.stream().noneMatch(o -> o.startsWith("-XX:SharedArchiveFile="))) {
        out("(the classic-mode archive could not be trained: classic-mode processes map the Kafka-mode one)");
        classicJvm = launcherJvm;
      }
    }
    out("Weir JVM options (bin/weir defaults): " + String.join(" ", launcherJvm));
    if (!classicJvm.equals(launcherJvm)) {
      out("Weir JVM options, classic mode (its own archive): " + String.join(" ", classicJvm));
    }
    if (phase("rw")) {
      remoteWrite();
    }
    if (phase("mem")) {
      memory();
    }
    if (phase("kafka")) {
      kafkaCatchUp();
    }
    if (phase("e2e")) {
      endToEnd();
    }
    out("");
    out("## Ratios");
    ratio("remote write samples/s, Weir / Prometheus", "rw.weir.samples_per_s", "rw.prometheus.samples_per_s");
    ratio("remote write samples/s, Weir / VictoriaMetrics", "rw.weir.samples_per_s", "rw.victoria.samples_per_s");
    ratio("remote write CPU-µs/sample, Weir / Prometheus", "rw.weir.cpu_us", "rw.prometheus.cpu_us");
    ratio("remote write CPU-µs/sample, Weir / VictoriaMetrics", "rw.weir.cpu_us", "rw.victoria.cpu_us");
    ratio("remote write samples/s, Weir fsync=interval / Prometheus", "rw.weir-fsync-interval.samples_per_s",
        "rw.prometheus.samples_per_s");
    ratio("remote write samples/s, Weir fsync=interval / VictoriaMetrics", "rw.weir-fsync-interval.samples_per_s",
        "rw.victoria.samples_per_s");
    ratio("RSS bytes/series, Weir / Prometheus", "mem.weir.bytes_per_series", "mem.prometheus.bytes_per_series");
    ratio("RSS bytes/series, Weir / VictoriaMetrics", "mem.weir.bytes_per_series", "mem.victoria.bytes_per_series");
    ratio("Kafka catch-up MB/s, Weir / Kafka's consumer tool", "kafka.weir.mb_per_s", "kafka.tool.mb_per_s");
    ratio("Kafka catch-up MB/s, Weir / Weir sequential", "kafka.weir.mb_per_s", "kafka.sequential.mb_per_s");
    ratio("Kafka catch-up MB/s, Weir + fetchers / Kafka's consumer tool", "kafka.fetchers.mb_per_s",
        "kafka.tool.mb_per_s");
    ratio("Kafka catch-up MB/s, Weir + fetchers / Weir sequential", "kafka.fetchers.mb_per_s",
        "kafka.sequential.mb_per_s");
    goals();
  }

  /**
   * The goals of issue 19, one row each: the measured ratio, the goal, and PASS/FAIL, or "not
   * measured" when a phase or system was left out. Every ratio comes from this run.
   */
  void goals() {
    out("");
    out("## Goals (issue 19)");
    out(String.format("%-72s %8s %8s  %s", "goal", "ratio", "target", "result"));
    goal("Remote write samples/s, Weir / VictoriaMetrics", atLeast(1.2), "rw.weir.samples_per_s",
        "rw.victoria.samples_per_s");
    goal("CPU-µs per sample, Weir / VictoriaMetrics", atMost(0.8), "rw.weir.cpu_us", "rw.victoria.cpu_us");
    goal("RSS under write load (remote write phase), Weir / VictoriaMetrics", atMost(1.0), "rw.weir.rss_bytes",
        "rw.victoria.rss_bytes");
    goal("RSS per series (memory phase), Weir / VictoriaMetrics", atMost(1.0), "mem.weir.bytes_per_series",
        "mem.victoria.bytes_per_series");
    goal("Kafka catch-up MB/s from process start, Weir / consumer tool", atLeast(0.8),
        "kafka.weir.mb_per_s_from_start", "kafka.tool.mb_per_s");
    goal("Catch-up samples/s / classic remote write samples/s", atLeast(2.0), "kafka.weir.samples_per_s",
        "rw.weir.samples_per_s");
    goal("Kafka mode sustainable write rate (one box) / classic remote write", atLeast(0.6),
        "e2e.sustainable_samples_per_s", "rw.weir.samples_per_s");
    Double head = values.get("kafka.weir.head_bytes");
    if (head != null && !head.isNaN()) {
      value("kafka.weir.rss_bound_bytes", (head + MAX_BUFFERED_BYTES) * 1.1);
    }
    goal("Peak RSS in catch-up / ((head estimate + max-buffered-bytes) x 1.1)", atMost(1.0),
        "kafka.weir.peak_rss_bytes", "kafka.weir.rss_bound_bytes");
    goal("Restart with the memory phase's series (kill -9 -> ready), Weir / Prometheus", atMost(0.5),
        "restart.weir.seconds", "restart.prometheus.seconds");
    values.put("one_million", 1e6);
    goal("WAL replay samples/s / 1M", atLeast(1.0), "replay.weir.samples_per_s", "one_million");
  }

  /** The reader pipeline's default bound, {@code --ingest-storage.kafka.max-buffered-bytes}. */
  static final double MAX_BUFFERED_BYTES = 104_857_600;

  static java.util.function.DoublePredicate atLeast(double target) {
    return new java.util.function.DoublePredicate() {
      @Override
      public boolean test(double r) {
        return r >= target;
      }

      @Override
      public String toString() {
        return ">= " + target;
      }
    };
  }

  static java.util.function.DoublePredicate atMost(double target) {
    return new java.util.function.DoublePredicate() {
      @Override
      public boolean test(double r) {
        return r <= target;
      }

      @Override
      public String toString() {
        return "<= " + target;
      }
    };
  }

  void goal(String what, java.util.function.DoublePredicate pass, String a, String b) {
    Double x = values.get(a);
    Double y = values.get(b);
    if (x == null || y == null || x.isNaN() || y.isNaN() || y <= 0) {
      out(String.format("%-72s %8s %8s  not measured (%s, %s)", what, "-", pass, a, b));
      return;
    }
    double r = x / y;
    out(String.format("%-72s %8.2f %8s  %s", what, r, pass, pass.test(r) ? "PASS" : "FAIL"));
  }

  void ratio(String what, String a, String b) {
    Double x = values.get(a);
    Double y = values.get(b);
    if (x != null && y != null && y > 0) {
      out(String.format("%-55s %6.2f", what, x / y));
    }
  }

  void value(String key, double v) {
    values.put(key, v);
  }

  // ---------------------------------------------------------------- remote write

  /** A system under test that takes remote write: where to push, its process, how to stop it. */
  record Target(String pushUrl, long pid, AutoCloseable stopper) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      stopper.close();
    }
  }

  /** Stops a Weir process; with {@code jfr} by SIGTERM first, since the recording is written at exit. */
  void stop(WeirProcess w) throws Exception {
    try {
      if (on("jfr")) {
        w.terminate(Duration.ofMinutes(1));
      }
    } finally {
      w.close();
    }
  }

  Target start(String system, String name) throws Exception {
    Path dir = work.resolve(name);
    Files.createDirectories(dir);
    switch (system) {
      case "weir", "weir-fsync-interval" -> {
        WeirProcess w = WeirProcess.launch(dir, jvm(dir, classicJvm), "--auth.multitenancy-enabled=false",
            "--distributor.max-series-per-request=1000000", "--ingester.max-global-series-per-user=0",
            // weir: the default, every push waits for its WAL fsync (group commit); the variant
            // fsyncs every second, as Prometheus and VictoriaMetrics do (a crash of the process
            // alone still loses nothing acknowledged; a power loss may lose the last second).
            "--blocks-storage.tsdb.wal-fsync=" + (system.equals("weir") ? "always" : "interval"));
        w.awaitReady(Duration.ofMinutes(5));
        return new Target(w.httpUrl() + "/api/v1/push", w.pid(), () -> stop(w));
      }
      case "prometheus" -> {
        PrometheusProcess p = PrometheusProcess.start(dir, Ports.free(), "global: {scrape_interval: 1h}\n",
            "--web.enable-remote-write-receiver", "--storage.tsdb.retention.time=30d");
        return new Target(p.url() + "/api/v1/write", p.pid(), p::close);
      }
      case "victoria" -> {
        int port = Ports.free();
        Process p = new ProcessBuilder("/usr/bin/victoria-metrics", "-storageDataPath=" + dir.resolve("data"),
            "-httpListenAddr=127.0.0.1:" + port, "-retentionPeriod=100y", "-loggerLevel=ERROR")
            .redirectErrorStream(true).redirectOutput(dir.resolve("vm.log").toFile()).start();
        HttpClient c = HttpClient.newHttpClient();
        Instant deadline = Instant.now().plusSeconds(60);
        while (true) {
          try {
            if (c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
              break;
            }
          } catch (IOException e) {
            if (Instant.now().isAfter(deadline)) {
              throw new IllegalStateException("victoria-metrics did not start: " + Files.readString(dir.resolve("vm.log")));
            }
          }
          Thread.sleep(100);
        }
        return new Target("http://127.0.0.1:" + port + "/api/v1/write", p.pid(), () -> {
          p.destroy();
          if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
          }
        });
      }
      default -> throw new IllegalArgumentException(system);
    }
  }

  /** Snappy bodies per connection, in send order (each connection owns whole series blocks, rounds in order). */
  static List<List<byte[]>> bodies(BenchData data, int rounds, int connections, long t0) throws IOException {
    List<List<byte[]>> out = new ArrayList<>();
    for (int c = 0; c < connections; c++) {
      out.add(new ArrayList<>());
    }
    int blocks = (data.series() + PER_REQUEST - 1) / PER_REQUEST;
    for (int round = 0; round < rounds; round++) {
      for (int b = 0; b < blocks; b++) {
        int from = b * PER_REQUEST;
        byte[] raw = data.request(from, Math.min(data.series(), from + PER_REQUEST), t0 + round * STEP, round)
            .toByteArray();
        out.get(b % connections).add(Snappy.compress(raw));
      }
    }
    return out;
  }

  /** Result of sending bodies: wall seconds, request latencies (ms), failures. */
  record Load(double seconds, double[] latenciesMs, long failures, long samples) {}

  static Load send(String url, List<List<byte[]>> perConnection, int fromIndex, int toIndex, long samplesPerBody)
      throws Exception {
    ConcurrentLinkedQueue<Double> lat = new ConcurrentLinkedQueue<>();
    AtomicLong failures = new AtomicLong();
    AtomicLong samples = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    long start = System.nanoTime();
    for (List<byte[]> mine : perConnection) {
      Thread t = new Thread(() -> {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        int to = Math.min(toIndex, mine.size());
        for (int i = fromIndex; i < to; i++) {
          HttpRequest req = HttpRequest.newBuilder(URI.create(url)).header("Content-Encoding", "snappy")
              .header("Content-Type", "application/x-protobuf").header("X-Prometheus-Remote-Write-Version", "0.1.0")
              .POST(HttpRequest.BodyPublishers.ofByteArray(mine.get(i))).build();
          long s = System.nanoTime();
          try {
            int code = client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
            if (code / 100 != 2) {
              failures.incrementAndGet();
            } else {
              samples.addAndGet(samplesPerBody);
            }
          } catch (Exception e) {
            failures.incrementAndGet();
          }
          lat.add((System.nanoTime() - s) / 1e6);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    double secs = (System.nanoTime() - start) / 1e9;
    return new Load(secs, lat.stream().mapToDouble(Double::doubleValue).sorted().toArray(), failures.get(),
        samples.get());
  }

  static double pct(double[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
  }

  void remoteWrite() throws Exception {
    int series = opt("series", 100_000);
    int samples = opt("samples", 40);
    int connections = opt("connections", 4);
    // Warm-up: the JIT compiles the hot path during the first million samples (measured: Weir's
    // compiler threads took 0.5-0.8 cores through a 3-round warm-up); every system gets the same.
    int warm = Math.min(opt("warm", 10), Math.max(0, samples - 1)); // at least one timed round
    out("");
    out("## HTTP remote write: " + series + " series x " + samples + " samples, " + PER_REQUEST
        + " series/request, " + connections + " connections (first " + warm + " rounds are warm-up)");
    BenchData data = new BenchData(series, 1);
    long t0 = (System.currentTimeMillis() / STEP) * STEP - (samples + 1) * STEP;
    List<List<byte[]>> bodies = bodies(data, samples, connections, t0);
    int blocks = (series + PER_REQUEST - 1) / PER_REQUEST;
    int warmPerConn = (int) Math.ceil((double) warm * blocks / connections);
    long bytes = bodies.stream().flatMap(List::stream).mapToLong(b -> b.length).sum();
    out(String.format("requests: %d, %.1f MB snappy (%.0f B/sample)", blocks * samples, bytes / 1e6,
        (double) bytes / ((long) series * samples)));
    out(String.format("%-20s %12s %10s %10s %10s %10s %8s", "system", "samples/s", "CPU-µs/smp", "p50 ms",
        "p99 ms", "RSS MB", "errors"));
    for (String system : systems()) {
      try (Target t = start(system, "rw-" + system)) {
        send(t.pushUrl(), bodies, 0, warmPerConn, PER_REQUEST);
        double cpu0 = ProcStats.cpuSeconds(t.pid());
        double jit0 = ProcStats.jitCpuSeconds(t.pid());
        Load l = send(t.pushUrl(), bodies, warmPerConn, Integer.MAX_VALUE, PER_REQUEST);
        double cpu = ProcStats.cpuSeconds(t.pid()) - cpu0;
        double jit = ProcStats.jitCpuSeconds(t.pid()) - jit0;
        if (jit > 0) {
          out(String.format("  (%s: JIT compiler threads %.2f CPU-µs/sample of the timed part)", system,
              jit / Math.max(1, l.samples()) * 1e6));
        }
        double rate = l.samples() / l.seconds();
        double cpuUs = cpu / Math.max(1, l.samples()) * 1e6;
        value("rw." + system + ".samples_per_s", rate);
        value("rw." + system + ".cpu_us", cpuUs);
        long rss = ProcStats.rssBytes(t.pid());
        value("rw." + system + ".rss_bytes", rss);
        out(String.format("%-20s %12.0f %10.2f %10.1f %10.1f %10.0f %8d", system, rate, cpuUs,
            pct(l.latenciesMs(), 0.5), pct(l.latenciesMs(), 0.99), rss / 1e6, l.failures()));
        nativeMemory("rw-" + system, t.pid());
      }
    }
  }

  /**
   * With {@code nmt=true}, a Weir process' native memory tracking summary: committed MB by area
   * (heap, class metadata, threads, code, GC, NIO buffers, ...), beside the RSS just printed; the
   * whole summary in {@code <work>/<name>.nmt.txt}.
   */
  void nativeMemory(String name, long pid) throws Exception {
    if (!on("nmt") || !name.contains("weir")) {
      return;
    }
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
        Long.toString(pid), "VM.native_memory", "summary", "scale=KB").redirectErrorStream(true).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    Files.writeString(work.resolve(name + ".nmt.txt"), text);
    Matcher m = Pattern.compile("(?m)^-?\\s*([A-Z][A-Za-z ]*?):? \\(?reserved=\\d+KB, committed=(\\d+)KB").matcher(text);
    StringBuilder line = new StringBuilder("  (" + name + " native memory tracking, committed MB:");
    while (m.find()) {
      long kb = Long.parseLong(m.group(2));
      if (kb >= 1024) {
        line.append(String.format(" %s %.0f;", m.group(1).trim(), kb / 1024.0));
      }
    }
    out(line.append(")").toString());
    out(String.format("  (%s resident MB: anonymous %.0f, files %.0f; class data sharing archive mappings, the JDK's"
        + " base archive included, anonymous and file pages: %.0f)", name,
        statusField(pid, "RssAnon:") / 1024.0, statusField(pid, "RssFile:") / 1024.0, archiveRssKb(pid) / 1024.0));
  }

  /** A /proc/PID/status field in kB; -1 when the process is gone. */
  static long statusField(long pid, String field) {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (l.startsWith(field)) {
          return Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      // gone
    }
    return -1;
  }

  /** Resident kB of the process' mappings of {@code .jsa} files (class data sharing archives). */
  static long archiveRssKb(long pid) {
    long kb = 0;
    boolean inArchive = false;
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/smaps"))) {
        if (l.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
          inArchive = l.endsWith(".jsa");
        } else if (inArchive && l.startsWith("Rss:")) {
          kb += Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return kb;
  }

  // ---------------------------------------------------------------- memory

  void memory() throws Exception {
    int series = opt("memorySeries", 1_000_000);
    int connections = opt("connections", 4);
    out("");
    out("## RSS per active series: " + series + " series x 2 samples, then 15 s idle (and 45 s)");
    BenchData data = new BenchData(series, 2);
    long t0 = (System.currentTimeMillis() / STEP) * STEP - 3 * STEP;
    List<List<byte[]>> bodies = bodies(data, 2, connections, t0);
    out(String.format("%-12s %12s %14s %12s", "system", "RSS MB", "bytes/series", "ingest s"));
    for (String system : systems()) {
      if (system.equals("weir-fsync-interval")) {
        continue; // the same memory as weir
      }
      Target t = start(system, "mem-" + system);
      try {
        long base = ProcStats.rssBytes(t.pid());
        Load l = send(t.pushUrl(), bodies, 0, Integer.MAX_VALUE, PER_REQUEST);
        Thread.sleep(15_000);
        long rss = ProcStats.rssBytes(t.pid());
        value("mem." + system + ".bytes_per_series", (double) rss / series);
        out(String.format("%-12s %12.0f %14.0f %12.1f   (idle RSS before: %.0f MB, errors %d)", system, rss / 1e6,
            (double) rss / series, l.seconds(), base / 1e6, l.failures()));
        nativeMemory("mem-" + system, t.pid());
        // The goal row stays at 15 s; 30 s later tells whether the figure was still settling then
        // (a collector returning memory after the load, for instance).
        Thread.sleep(30_000);
        long later = ProcStats.rssBytes(t.pid());
        value("mem." + system + ".bytes_per_series_45s", (double) later / series);
        out(String.format("%-12s %12.0f %14.0f   (the same, 45 s after the load)", system, later / 1e6,
            (double) later / series));
        if (system.equals("weir")) {
          replay(t, series);
        }
        if (system.equals("prometheus")) {
          restartPrometheus(t, series);
        }
      } finally {
        t.close();
      }
    }
  }

  /** Restarts the million-series Weir after kill -9 and times the WAL replay and start-up. */
  void replay(Target t, int series) throws Exception {
    Path dir = work.resolve("mem-weir");
    long pid = t.pid();
    new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor();
    Thread.sleep(500);
    long start = System.nanoTime();
    Path restartDir = dir.resolve("restart");
    Files.createDirectories(restartDir);
    WeirProcess w = WeirProcess.launch(restartDir, jvm(restartDir, classicJvm), "--auth.multitenancy-enabled=false",
        "--ingester.data-dir=" + dir.resolve("data"), "--ingester.max-global-series-per-user=0");
    try {
      w.awaitReady(Duration.ofMinutes(10));
      double secs = (System.nanoTime() - start) / 1e9;
      value("restart.weir.seconds", secs);
      Matcher m = Pattern.compile("WAL replayed.*samples=(\\d+) seconds=([0-9.]+) samples_per_s=(\\d+)")
          .matcher(w.log());
      if (m.find()) {
        value("replay.weir.samples_per_s", Double.parseDouble(m.group(3)));
        m.reset();
      }
      String replay = m.find() ? m.group(1) + " samples in " + m.group(2) + " s (" + m.group(3) + " samples/s)" : "?";
      out(String.format("weir restart after kill -9 with %d series: ready in %.1f s; WAL replay %s", series, secs,
          replay));
    } finally {
      stop(w);
    }
  }

  /** Kills the million-series Prometheus with -9 and times its restart (WAL replay) until ready. */
  void restartPrometheus(Target t, int series) throws Exception {
    new ProcessBuilder("kill", "-9", String.valueOf(t.pid())).start().waitFor();
    Thread.sleep(500);
    long start = System.nanoTime();
    PrometheusProcess p = PrometheusProcess.start(work.resolve("mem-prometheus"), Ports.free(),
        "global: {scrape_interval: 1h}\n", "--web.enable-remote-write-receiver", "--storage.tsdb.retention.time=30d");
    try {
      double secs = (System.nanoTime() - start) / 1e9;
      value("restart.prometheus.seconds", secs);
      out(String.format("prometheus restart after kill -9 with %d series: ready in %.1f s", series, secs));
    } finally {
      p.close();
    }
  }

  // ---------------------------------------------------------------- Kafka catch-up

  void kafkaCatchUp() throws Exception {
    int mb = opt("kafkaMb", 1024);
    out("");
    out("## Kafka catch-up: " + mb + " MB backlog in one partition");
    try (KafkaBroker broker = KafkaBroker.start(work.resolve("kafka"))) {
      String topic = "bench";
      broker.createTopic(topic, 1);
      BenchData data = new BenchData(100_000, 3);
      KafkaConfig cfg = KafkaConfig.defaults(broker.bootstrap(), topic, "producer")
          .withProducerCompression(compression());
      long bytes = 0;
      long samples = 0;
      int records = 0;
      long t0 = (System.currentTimeMillis() / STEP) * STEP - 3_600_000;
      try (Writer w = new Writer(cfg, WriterMetrics.noop())) {
        for (int round = 0; bytes < mb * 1_000_000L; round++) {
          for (int from = 0; from < data.series() && bytes < mb * 1_000_000L; from += PER_REQUEST) {
            WriteRequest req = data.request(from, from + PER_REQUEST, t0 + round * 1_000L, round);
            w.write("bench", Map.of(0, req));
            bytes += req.getSerializedSize();
            samples += PER_REQUEST;
            records++;
          }
        }
      }
      out(String.format("backlog: %d records, %.0f MB, %d samples (%.0f B/sample), %s batches of %.0f MB on the"
          + " broker", records, bytes / 1e6, samples, (double) bytes / samples, compression(),
          broker.partitionBytes(topic, 0) / 1e6));
      out(String.format("%-48s %10s %12s %10s %12s %12s", "consumer", "MB/s", "samples/s", "CPU s", "peak RSS MB",
          "seconds"));
      String tool = broker.run(List.of("org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server",
          broker.bootstrap(), "--topic", topic, "--messages", String.valueOf(records), "--timeout", "120000",
          "--group", "perf-" + System.nanoTime()), 300);
      double toolMb = parseToolMbPerSec(tool);
      value("kafka.tool.mb_per_s", toolMb);
      out(String.format("%-48s %10.1f %12.0f %10s %12s %12.1f", "kafka-consumer-perf-test", toolMb,
          toolMb * 1e6 / ((double) bytes / samples), "-", "-", bytes / 1e6 / toolMb));
      String concurrency = opts.getOrDefault("concurrency", "8");
      String fetchers = opts.getOrDefault("fetchConcurrency", "4");
      List<String[]> variants = new ArrayList<>();
      variants.add(new String[] {"weir", concurrency, "0"});
      if (!fetchers.equals("0")) {
        variants.add(new String[] {"fetchers", concurrency, fetchers});
      }
      if (!opts.containsKey("skipSequential")) {
        variants.add(new String[] {"sequential", "0", "0"});
      }
      for (String[] variant : variants) {
        Path dir = work.resolve("kafka-" + variant[0]);
        Instant launched = Instant.now();
        WeirProcess w = WeirProcess.launch(dir, jvm(dir), "--target=ingester", "--ingester.id=ingester-0",
            "--ingest-storage.enabled=true", "--ingest-storage.kafka.address=" + broker.bootstrap(),
            "--ingest-storage.kafka.topic=" + topic, "--ingest-storage.kafka.consume-from-position-at-startup=start",
            "--ingest-storage.kafka.consumer-group=bench-" + variant[0] + "-" + System.nanoTime(),
            "--ingest-storage.kafka.ingestion-concurrency-max=" + variant[1],
            "--ingest-storage.kafka.fetch-concurrency-max=" + variant[2],
            "--ingest-storage.kafka.ingestion-concurrency-batch-size=" + opts.getOrDefault("batchSize", "150"),
            "--auth.multitenancy-enabled=false",
            "--ingester.partition-ring.min-partition-owners-duration=0s");
        try {
          double cpuStart = Double.NaN;
          long peakRss = 0;
          double peakBuffered = 0;
          long polls = 0;
          Instant deadline = Instant.now().plus(Duration.ofMinutes(15));
          while (Instant.now().isBefore(deadline)) {
            String log = w.log();
            if (Double.isNaN(cpuStart) && log.contains("partition reader starting")) {
              cpuStart = ProcStats.cpuSeconds(w.pid());
            }
            peakRss = Math.max(peakRss, ProcStats.rssBytes(w.pid()));
            // Every ~2 s, like a fast scrape: /metrics walks every series for its gauges.
            if (polls++ % 100 == 0 && !Double.isNaN(cpuStart)) {
              try {
                double b = w.metric("weir_ingest_storage_reader_buffered_bytes{partition=\"0\"}");
                if (!Double.isNaN(b)) {
                  peakBuffered = Math.max(peakBuffered, b);
                }
              } catch (Exception e) {
                // not serving yet
              }
            }
            if (log.contains("partition reader caught up")) {
              break;
            }
            Thread.sleep(20);
          }
          double cpu = ProcStats.cpuSeconds(w.pid()) - cpuStart;
          double secs = between(w.log(), "partition reader starting", "partition reader caught up");
          double mbps = bytes / 1e6 / secs;
          double fromStart = (ts(w.log(), "partition reader caught up").toEpochMilli() - launched.toEpochMilli())
              / 1000.0;
          value("kafka." + variant[0] + ".mb_per_s_from_start", bytes / 1e6 / fromStart);
          value("kafka." + variant[0] + ".samples_per_s", samples / secs);
          value("kafka." + variant[0] + ".peak_rss_bytes", peakRss);
          double head = w.metricSum(n -> n.equals("weir_tsdb_head_memory_estimate_bytes"));
          value("kafka." + variant[0] + ".head_bytes", head);
          maxBufferedSeen = Math.max(maxBufferedSeen, peakBuffered);
          value("kafka." + variant[0] + ".mb_per_s", mbps);
          out(String.format("%-48s %10.1f %12.0f %10.1f %12.0f %12.1f", "weir " + (variant[1].equals("0")
              ? "sequential (concurrency 0)" : "pipelined (concurrency " + variant[1] + ")")
              + (variant[2].equals("0") ? "" : " + " + variant[2] + " fetchers"), mbps, samples / secs, cpu,
              peakRss / 1e6, secs));
          out(String.format("%-48s from process start: %.1f s = %.1f MB/s; head estimate %.0f MB", "", fromStart,
              bytes / 1e6 / fromStart, head / 1e6));
        } finally {
          stop(w);
        }
      }
      out(String.format("memory bound: at most %.1f MB of records in a reader pipeline (sampled), against"
          + " --ingest-storage.kafka.max-buffered-bytes = 104.9 MB, for a %d MB backlog", maxBufferedSeen / 1e6, mb));
    }
  }

  /** The most record bytes seen in a reader pipeline during the catch-ups (sampled from /metrics). */
  double maxBufferedSeen;

  static double parseToolMbPerSec(String out) {
    // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
    for (String line : out.split("\n")) {
      String[] f = line.split(",\\s*");
      if (f.length >= 6 && f[0].matches("\\d{4}-.*")) {
        return Double.parseDouble(f[3]);
      }
    }
    throw new IllegalStateException("cannot parse kafka-consumer-perf-test output:\n" + out);
  }

  /** Seconds between the timestamps of the first log lines containing {@code a} and {@code b}. */
  static double between(String log, String a, String b) {
    return (ts(log, b).toEpochMilli() - ts(log, a).toEpochMilli()) / 1000.0;
  }

  static Instant ts(String log, String needle) {
    for (String line : log.split("\n")) {
      if (line.contains(needle)) {
        Matcher m = Pattern.compile("ts=(\\S+)").matcher(line);
        if (m.find()) {
          return Instant.parse(m.group(1));
        }
      }
    }
    throw new IllegalStateException("no log line with " + needle);
  }

  // ---------------------------------------------------------------- end to end

  void endToEnd() throws Exception {
    int connections = opt("connections", 4);
    out("");
    out("## End-to-end latency, Kafka mode (push to the distributor → visible in a query on the ingester)");
    List<String> brokerJvm = on("jfr")
        ? List.of("-XX:StartFlightRecording=settings=profile,filename=" + work.resolve("kafka-e2e.jfr"))
        : List.of();
    try (KafkaBroker broker = KafkaBroker.start(work.resolve("kafka-e2e"), brokerJvm)) {
      broker.createTopic("e2e", 1);
      WeirProcess w = WeirProcess.launch(work.resolve("e2e"), jvm(work.resolve("e2e")), "--ingest-storage.enabled=true",
          "--ingest-storage.kafka.address=" + broker.bootstrap(), "--ingest-storage.kafka.topic=e2e",
          "--ingester.id=ingester-0", "--auth.multitenancy-enabled=false",
          "--ingester.partition-ring.min-partition-owners-duration=0s",
          "--ingest-storage.kafka.producer-compression=" + compression());
      try {
        w.awaitReady(Duration.ofMinutes(2));
        String push = w.httpUrl() + "/api/v1/push";
        BenchData data = new BenchData(20_000, 4);
        long t0 = (System.currentTimeMillis() / STEP) * STEP - 600 * STEP;
        // 600 rounds = 1,500 bodies per connection: warm-up, sustainable load, probes.
        List<List<byte[]>> bodies = bodies(data, 600, connections, t0);
        int warm = opt("e2eWarm", 700);
        int timed = 250;
        // Warm-up: three JVMs (Weir, the broker, this runner's client) compile their hot paths.
        // Measured: their compiler threads took 0.6-0.8 of the 2 cores through a 40-body warm-up
        // and still 0.2-0.5 after 300 bodies (code run once per request, such as the Kafka
        // clients' network loops, reaches C2 only after thousands of requests).
        send(push, bodies, 0, warm, PER_REQUEST);
        // Sustainable load: as fast as it goes.
        double weirCpu0 = ProcStats.cpuSeconds(w.pid());
        double brokerCpu0 = ProcStats.cpuSeconds(broker.pid());
        double jit0 = ProcStats.jitCpuSeconds(w.pid()) + ProcStats.jitCpuSeconds(broker.pid())
            + ProcStats.jitCpuSeconds(ProcessHandle.current().pid());
        Load max = send(push, bodies, warm, warm + timed, PER_REQUEST);
        double weirCpu = ProcStats.cpuSeconds(w.pid()) - weirCpu0;
        double brokerCpu = ProcStats.cpuSeconds(broker.pid()) - brokerCpu0;
        double jit = ProcStats.jitCpuSeconds(w.pid()) + ProcStats.jitCpuSeconds(broker.pid())
            + ProcStats.jitCpuSeconds(ProcessHandle.current().pid()) - jit0;
        out(String.format("  (JIT compiler threads of Weir, the broker and the runner: %.2f CPU-µs/sample of the"
            + " timed part)", jit * 1e6 / max.samples()));
        double sustainable = max.samples() / max.seconds();
        double[] pushLat = max.latenciesMs().clone();
        Arrays.sort(pushLat);
        value("e2e.weir_cpu_us", weirCpu * 1e6 / max.samples());
        value("e2e.broker_cpu_us", brokerCpu * 1e6 / max.samples());
        out(String.format("at full load: Weir %.2f CPU-µs/sample (distributor and ingester), broker %.2f;"
            + " push p50 %.1f ms, p99 %.1f ms", weirCpu * 1e6 / max.samples(), brokerCpu * 1e6 / max.samples(),
            pct(pushLat, 0.5), pct(pushLat, 0.99)));
        double target = sustainable / 2;
        value("e2e.sustainable_samples_per_s", sustainable);
        if (on("jfr")) {
          // The broker is stopped without the JVM's exit hooks; its recording is dumped here.
          new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
              Long.toString(broker.pid()), "JFR.dump", "filename=" + work.resolve("kafka-e2e.jfr"))
              .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        }
        out(String.format("sustainable: %.0f samples/s (%d errors); probing at %.0f samples/s", sustainable,
            max.failures(), target));
        // Half load in the background, paced, while probes measure push → visible.
        List<byte[]> rest = new ArrayList<>();
        for (List<byte[]> c : bodies) {
          rest.addAll(c.subList(Math.min(warm + timed, c.size()), c.size()));
        }
        Thread load = new Thread(() -> {
          HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
          long start = System.nanoTime();
          long sent = 0;
          for (byte[] body : rest) {
            long due = start + (long) (sent / target * 1e9);
            long wait = due - System.nanoTime();
            if (wait > 0) {
              try {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
              } catch (InterruptedException e) {
                return;
              }
            }
            try {
              client.send(HttpRequest.newBuilder(URI.create(push)).header("Content-Encoding", "snappy")
                  .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.discarding());
            } catch (Exception e) {
              return;
            }
            sent += PER_REQUEST;
          }
        });
        load.setDaemon(true);
        load.start();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<Double> lat = new ArrayList<>();
        for (int i = 0; i < 200 && load.isAlive(); i++) {
          // In the load's time range: a probe at the wall clock would move the head's newest time
          // an hour past the load, whose samples would then be refused as out of bounds.
          long now = t0 + 450 * STEP;
          WriteRequest probe = WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("e2e_probe"))
              .addLabels(Label.newBuilder().setName("seq").setValue(String.valueOf(i)))
              .addSamples(Sample.newBuilder().setTimestamp(now).setValue(i))).build();
          long s = System.nanoTime();
          client.send(HttpRequest.newBuilder(URI.create(push)).header("Content-Encoding", "snappy")
              .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(probe.toByteArray()))).build(),
              HttpResponse.BodyHandlers.discarding());
          String q = w.httpUrl() + "/api/v1/series?match[]=e2e_probe%7Bseq%3D%22" + i + "%22%7D";
          while (true) {
            String body = client.send(HttpRequest.newBuilder(URI.create(q)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
            if (body.contains("\"seq\"")) {
              break;
            }
            Thread.sleep(1);
          }
          lat.add((System.nanoTime() - s) / 1e6);
          Thread.sleep(50);
        }
        load.interrupt();
        double[] sorted = lat.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        value("e2e.p99_ms", pct(sorted, 0.99));
        out(String.format("probes: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms", sorted.length, pct(sorted, 0.5),
            pct(sorted, 0.99), sorted.length > 0 ? sorted[sorted.length - 1] : Double.NaN));
      } finally {
        stop(w);
      }
    }
  }
}
