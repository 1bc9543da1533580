package dev.weir.ingester.testing;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.ClassDataSharing;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.xerial.snappy.Snappy;

/**
 * Runs the real {@code weir.jar} as a child process, for tests that kill, restart or signal it.
 * Output goes to a log file in the given directory; {@link #log()} reads it for assertions and
 * failure messages.
 *
 * <p>Not thread-safe. Closing kills the process if it still runs.
 */
public final class WeirProcess implements AutoCloseable {
  private final List<String> args;
  private final Path logFile;
  private final int httpPort;
  private final int grpcPort;
  /** The tests' JVM: a small serial-GC heap. */
  private static final List<String> TEST_JVM = List.of("-Xmx512m", "-XX:+UseSerialGC");
  private static List<String> classDataSharing;
  private Process process;
  private List<String> jvmOptions;

  private WeirProcess(List<String> args, Path logFile, int httpPort, int grpcPort) {
    this.args = args;
    this.logFile = logFile;
    this.httpPort = httpPort;
    this.grpcPort = grpcPort;
  }

  /**
   * Starts Weir with free ports, the data dir {@code dir/data}, the filesystem bucket
   * {@code dir/bucket} and {@code extraArgs} (later flags win), and waits
   * until {@code /ready} answers 200.
   */
  public static WeirProcess start(Path dir, String... extraArgs) throws Exception {
    WeirProcess p = launch(dir, extraArgs);
    p.awaitReady(Duration.ofSeconds(60));
    return p;
  }

  /** Starts Weir like {@link #start} but returns at once, without waiting for readiness. */
  public static WeirProcess launch(Path dir, String... extraArgs) throws Exception {
    return launch(dir, null, extraArgs);
  }

  /**
   * Like {@link #launch(Path, String...)} with these JVM options instead of the tests' small
   * serial-GC heap (benchmarks pass the launcher's defaults).
   */
  public static WeirProcess launch(Path dir, List<String> jvmOptions, String... extraArgs) throws Exception {
    java.nio.file.Files.createDirectories(dir);
    int http = Ports.free();
    int grpc = Ports.free();
    List<String> args = new ArrayList<>();
    args.add("--server.http-listen-address=127.0.0.1");
    args.add("--server.http-listen-port=" + http);
    args.add("--server.grpc-listen-address=127.0.0.1");
    args.add("--server.grpc-listen-port=" + grpc);
    args.add("--ingester.data-dir=" + dir.resolve("data"));
    args.add("--server.graceful-shutdown-timeout=5s");
    // Ingesters ship blocks by default: into the test's directory, not the working directory.
    args.add("--blocks-storage.filesystem.dir=" + dir.resolve("bucket"));
    args.addAll(List.of(extraArgs));
    WeirProcess p = new WeirProcess(args, dir.resolve("weir.log"), http, grpc);
    p.jvmOptions = jvmOptions != null ? List.copyOf(jvmOptions) : testJvm();
    p.launch();
    return p;
  }

  /** Runs the binary with arguments to completion (for --help, bad flags) and returns it. */
  public static Process runToExit(Path dir, String... args) throws Exception {
    List<String> cmd = javaCommand(testJvm());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("weir " + String.join(" ", args) + " did not exit");
    }
    return p;
  }

  /**
   * The JVM options {@code bin/weir} starts Weir with: the non-comment lines of
   * {@code bin/jvm.options}, for tests and benchmarks that measure what production runs.
   */
  public static List<String> launcherJvmOptions() {
    Path options = RepoPaths.root().resolve("bin").resolve("jvm.options");
    try {
      List<String> out = new ArrayList<>();
      for (String line : Files.readAllLines(options)) {
        if (!line.isBlank() && !line.trim().startsWith("#")) {
          out.addAll(List.of(line.trim().split("\\s+")));
        }
      }
      if (out.isEmpty()) {
        throw new IllegalStateException("no JVM options in " + options);
      }
      return List.copyOf(out);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + options, e);
    }
  }

  /**
   * {@link #launcherJvmOptions()} plus the class data sharing archive {@code bin/weir} maps from
   * its second start on (its first normal exit writes one, {@code ingester/target/weir.jsa}):
   * benchmarks measure that start. The archive here, {@code ingester/target/weir-bench.jsa}, is
   * trained once per build of {@code weir.jar} by a process with the launcher's options in Kafka
   * mode ({@code --target=all}, in-memory ring) on a broker of its own in {@code dir}, which takes
   * one remote write, a query and a scrape, so it holds the classes of the classic and the Kafka
   * paths. Without an archive (training failed) the launcher's options alone.
   */
  public static List<String> launcherJvmOptionsWithArchive(Path dir) {
    return withBenchArchive("weir-bench.jsa", (launcher, dump) -> {
      Files.createDirectories(dir);
      try (KafkaBroker broker = KafkaBroker.start(dir.resolve("kafka"))) {
        broker.createTopic("cds", 1);
        try (WeirProcess w = launch(dir.resolve("weir"), concat(launcher, dump), "--ingest-storage.enabled=true",
            "--ingest-storage.kafka.address=" + broker.bootstrap(), "--ingest-storage.kafka.topic=cds",
            "--ingester.id=ingester-0", "--auth.multitenancy-enabled=false",
            "--ingester.partition-ring.min-partition-owners-duration=0s")) {
          trainAndExit(w);
        }
      }
    });
  }

  /**
   * As {@link #launcherJvmOptionsWithArchive}, with the archive a classic-mode deployment's
   * {@code bin/weir} writes at its first normal exit ({@code ingester/target/weir-bench-classic.jsa}):
   * trained by a classic process (all components, no Kafka) that takes one remote write, a query
   * and a scrape, so it holds only the classes that path loads.
   */
  public static List<String> launcherJvmOptionsWithClassicArchive(Path dir) {
    return withBenchArchive("weir-bench-classic.jsa", (launcher, dump) -> {
      Files.createDirectories(dir);
      try (WeirProcess w = launch(dir.resolve("weir-classic"), concat(launcher, dump),
          "--auth.multitenancy-enabled=false")) {
        trainAndExit(w);
      }
    });
  }

  /** How a benchmark archive is trained: a process started with the launcher's options and {@code dump}. */
  private interface BenchTraining {
    void run(List<String> launcher, List<String> dump) throws Exception;
  }

  /**
   * The launcher's options plus the archive {@code file} next to {@code weir.jar}, trained by
   * {@code training} when missing or stale; the launcher's options alone when training failed.
   */
  private static List<String> withBenchArchive(String file, BenchTraining training) {
    List<String> launcher = launcherJvmOptions();
    Path jar = RepoPaths.weirJar();
    List<String> options = new ArrayList<>(launcher);
    options.addAll(ClassDataSharing.archived(jar.resolveSibling(file), List.of(jar),
        dump -> training.run(launcher, dump)));
    return List.copyOf(options);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  /**
   * What a training process for an archive does once ready: one remote write, a query and a
   * scrape, then a normal exit, at which the JVM writes the archive.
   */
  private static void trainAndExit(WeirProcess w) throws Exception {
    w.awaitReady(Duration.ofSeconds(120));
    pushOne(w, "cds");
    w.get("/api/v1/series?match[]=cds");
    w.get("/metrics");
    w.terminate(Duration.ofSeconds(60));
  }

  /** Pushes one sample of the series {@code {__name__="<name>"}} through remote write. */
  private static void pushOne(WeirProcess w, String name) throws Exception {
    TimeSeries series = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addSamples(Sample.newBuilder().setTimestamp(System.currentTimeMillis()).setValue(1)).build();
    new RemoteClient(w.httpUrl()).post("/api/v1/push",
        Snappy.compress(WriteRequest.newBuilder().addTimeseries(series).build().toByteArray()),
        "Content-Encoding", "snappy", "Content-Type", "application/x-protobuf",
        "X-Prometheus-Remote-Write-Version", "0.1.0", "X-Scope-OrgID", name);
  }

  /** {@link #TEST_JVM} and the class data sharing options of {@code weir.jar}. */
  private static List<String> testJvm() {
    List<String> options = new ArrayList<>(TEST_JVM);
    options.addAll(classDataSharing());
    return options;
  }

  /**
   * The options that map the archive {@code ingester/target/weir-test.jsa} of this build's
   * {@code weir.jar} ({@link ClassDataSharing}), trained at first use by a Kafka-mode
   * {@code --target=all} process on the shared broker and etcd that takes one remote write: it
   * loads the classes of the classic and the Kafka paths, which every other target uses a part of.
   */
  private static synchronized List<String> classDataSharing() {
    if (classDataSharing == null) {
      Path jar = RepoPaths.weirJar();
      classDataSharing = ClassDataSharing.options(jar.resolveSibling("weir-test.jsa"), List.of(jar), options -> {
        Path dir = Files.createTempDirectory("weir-cds");
        KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
        c.broker.createTopic(c.topic, 1);
        List<String> jvm = new ArrayList<>(TEST_JVM);
        jvm.addAll(options);
        // A group of its own: tests read the group ingester-zone-a-0 of the shared broker back from Kafka.
        try (WeirProcess w = launch(dir, jvm, c.args("--target=all", "--ingester.id=ingester-zone-a-0",
            "--ingest-storage.kafka.consumer-group=cds-training-" + c.topic))) {
          w.awaitReady(Duration.ofSeconds(120));
          pushOne(w, "cds");
          w.get("/metrics");
          w.terminate(Duration.ofSeconds(60)); // a normal exit: the JVM writes the archive
        } finally {
          try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
          }
        }
      });
    }
    return classDataSharing;
  }

  private static List<String> javaCommand(List<String> jvmOptions) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    cmd.add("-jar");
    cmd.add(RepoPaths.weirJar().toString());
    return cmd;
  }

  private void launch() throws IOException {
    List<String> cmd = javaCommand(jvmOptions);
    cmd.addAll(args);
    process = new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
        .start();
  }

  /** Waits for 200 from /ready, failing early if the process exits. */
  public void awaitReady(Duration timeout) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("weir exited with " + process.exitValue() + ":\n" + log());
      }
      try {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(httpUrl() + "/ready"))
            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("weir not ready after " + timeout + ":\n" + log());
  }

  /** Sends SIGTERM and waits for the exit code. */
  public int terminate(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("weir did not stop within " + timeout + " after SIGTERM");
    }
    return process.exitValue();
  }

  /** SIGKILL: no shutdown hook, no flush. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** Starts the same command again (same ports and data dir) and waits until ready. */
  public void restart() throws Exception {
    launch();
    awaitReady(Duration.ofSeconds(120));
  }

  /** Starts the same command again without waiting for readiness. */
  public void relaunch() throws IOException {
    launch();
  }

  /** GET a path; returns the body (any status). */
  public String get(String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(httpUrl() + path)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  /** GET a path with a 5 s timeout; the whole response (status and body). */
  public HttpResponse<String> getResponse(String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(httpUrl() + path))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The value of a metric line (name with labels as printed), or NaN when absent. */
  public double metric(String nameAndLabels) throws Exception {
    for (String line : get("/metrics").split("\n")) {
      if (line.startsWith(nameAndLabels + " ")) {
        return Double.parseDouble(line.substring(nameAndLabels.length() + 1));
      }
    }
    return Double.NaN;
  }

  /**
   * The sum of every metric line whose name (without labels) satisfies {@code name}; NaN when no
   * line does. For metrics whose exact name a test does not pin, e.g. "contains wal and corrupt".
   */
  public double metricSum(java.util.function.Predicate<String> name) throws Exception {
    double sum = Double.NaN;
    for (String line : get("/metrics").split("\n")) {
      if (line.startsWith("#") || line.isBlank()) {
        continue;
      }
      int end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
      if (name.test(line.substring(0, end))) {
        double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        sum = Double.isNaN(sum) ? v : sum + v;
      }
    }
    return sum;
  }

  /** The metric lines whose text contains {@code part}, for failure messages. */
  public String metricLines(String part) {
    try {
      return String.join("\n", java.util.Arrays.stream(get("/metrics").split("\n"))
          .filter(l -> !l.startsWith("#") && l.contains(part)).toList());
    } catch (Exception e) {
      return "<no metrics: " + e + ">";
    }
  }

  /** The last {@code lines} lines of the log, for failure messages. */
  public String logTail(int lines) {
    String[] all = log().split("\n");
    return String.join("\n", java.util.Arrays.copyOfRange(all, Math.max(0, all.length - lines), all.length));
  }

  /** The OS process ID (for CPU and RSS readings). */
  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public String httpUrl() {
    return "http://127.0.0.1:" + httpPort;
  }

  public String grpcTarget() {
    return "127.0.0.1:" + grpcPort;
  }

  public int grpcPort() {
    return grpcPort;
  }

  public int httpPort() {
    return httpPort;
  }

  public String log() {
    try {
      return Files.exists(logFile) ? Files.readString(logFile) : "<no log>";
    } catch (IOException e) {
      return "<unreadable log: " + e + ">";
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      process.waitFor();
    }
  }
}
