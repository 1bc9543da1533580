package dev.weir.storage.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A real Apache Kafka broker (4.x, KRaft, one combined broker+controller node on loopback) in its
 * own JVM, started from the jars that the {@code storage/kafka-broker} module resolves. Tests that
 * only consume share {@link #shared()} with a unique topic each; tests that stop or restart the
 * broker start their own.
 *
 * <p>Not thread-safe.
 */
public final class KafkaBroker implements AutoCloseable {
  private static KafkaBroker shared;
  private static List<String> classDataSharing;

  private final Path dir;
  private final int port;
  private final int controllerPort;
  private final int saslPort;
  private Process process;
  private List<String> jvmOptions = List.of();

  /** The SASL/PLAIN user of the {@link #saslBootstrap()} listener. */
  public static final String SASL_USER = "weir";
  public static final String SASL_PASSWORD = "weir secret!";

  private KafkaBroker(Path dir, int port, int controllerPort, int saslPort) {
    this.dir = dir;
    this.port = port;
    this.controllerPort = controllerPort;
    this.saslPort = saslPort;
  }

  public static synchronized KafkaBroker shared() throws Exception {
    if (shared == null) {
      shared = start(Files.createTempDirectory("weir-kafka-shared"));
      KafkaBroker b = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(b::close));
    }
    return shared;
  }

  /** Formats a new single-node cluster in {@code dir} and starts it. */
  public static KafkaBroker start(Path dir) throws Exception {
    List<String> cds = classDataSharing();
    return start(dir, cds, cds);
  }

  /** As {@link #start(Path)}, the broker JVM started with {@code extraOptions} too (a profiler, say). */
  public static KafkaBroker start(Path dir, List<String> extraOptions) throws Exception {
    List<String> cds = classDataSharing();
    List<String> options = new ArrayList<>(cds);
    options.addAll(extraOptions);
    return start(dir, cds, options);
  }

  /** Formats with the JVM options {@code formatOptions}, then starts with {@code brokerOptions}. */
  private static KafkaBroker start(Path dir, List<String> formatOptions, List<String> brokerOptions)
      throws Exception {
    KafkaBroker b = new KafkaBroker(dir, free(), free(), free());
    b.writeConfig();
    b.jvmOptions = formatOptions;
    b.run(List.of("kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(), "-c",
        dir.resolve("server.properties").toString(), "--standalone"), 60);
    b.jvmOptions = brokerOptions;
    b.launch();
    return b;
  }

  /**
   * The class data sharing options of every broker and tool JVM ({@link ClassDataSharing}): the
   * archive {@code storage/kafka-broker/target/broker.jsa}, trained at first use by a broker that
   * creates a topic, takes a record, serves it and a group's commit, and shuts down.
   */
  private static synchronized List<String> classDataSharing() throws IOException {
    if (classDataSharing == null) {
      Path lib = lib();
      classDataSharing = ClassDataSharing.options(lib.resolveSibling("broker.jsa"), ClassDataSharing.jarsIn(lib),
          options -> {
            Path dir = Files.createTempDirectory("weir-kafka-cds");
            KafkaBroker b = start(dir, List.of(), options);
            try {
              b.createTopic("cds", 1);
              try (KafkaProducer<byte[], byte[]> p = Backlog.producer(b.bootstrap())) {
                p.send(new ProducerRecord<>("cds", 0, new byte[1], new byte[1])).get(30, TimeUnit.SECONDS);
              }
              Properties c = new Properties();
              c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrap());
              c.put(ConsumerConfig.GROUP_ID_CONFIG, "cds");
              try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(),
                  new ByteArrayDeserializer())) {
                TopicPartition tp = new TopicPartition("cds", 0);
                consumer.assign(List.of(tp)); // as Weir's readers do: assign, fetch, commit for the group
                consumer.seekToBeginning(List.of(tp));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (consumer.poll(Duration.ofMillis(500)).isEmpty() && System.nanoTime() < deadline) {
                  // the first fetches may come back empty
                }
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1)));
              }
            } finally {
              b.stop();
              try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
              }
            }
          });
    }
    return classDataSharing;
  }

  /** The jars of the broker, resolved by the storage/kafka-broker module. */
  public static Path lib() {
    return ModuleLib.of("storage/kafka-broker");
  }

  private static int free() {
    return dev.weir.ring.testing.LoopbackPorts.free();
  }

  private void writeConfig() throws IOException {
    Files.createDirectories(dir);
    String props = String.join("\n",
        "process.roles=broker,controller",
        "node.id=1",
        "controller.quorum.bootstrap.servers=127.0.0.1:" + controllerPort,
        "listeners=PLAINTEXT://127.0.0.1:" + port + ",SASL://127.0.0.1:" + saslPort + ",CONTROLLER://127.0.0.1:"
            + controllerPort,
        "advertised.listeners=PLAINTEXT://127.0.0.1:" + port + ",SASL://127.0.0.1:" + saslPort,
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms=PLAIN",
        "listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " username=\"admin\" password=\"admin\" user_" + SASL_USER + "=\""
            + SASL_PASSWORD + "\";",
        "inter.broker.listener.name=PLAINTEXT",
        "log.dirs=" + dir.resolve("data"),
        "num.partitions=1",
        "offsets.topic.replication.factor=1",
        "offsets.topic.num.partitions=4",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        "auto.create.topics.enable=false",
        "");
    Files.writeString(dir.resolve("server.properties"), props);
    Files.writeString(dir.resolve("log4j2.yaml"), """
        Configuration:
          Appenders:
            Console:
              name: STDOUT
              PatternLayout:
                Pattern: "[%d] %p %m (%c)%n"
          Loggers:
            Root:
              level: WARN
              AppenderRef:
                - ref: STDOUT
        """);
  }

  private List<String> java(List<String> mainAndArgs) {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-XX:+UseSerialGC", "-Dlog4j2.configurationFile=" + dir.resolve("log4j2.yaml")));
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", lib() + "/*"));
    cmd.addAll(mainAndArgs);
    return cmd;
  }

  /** Runs a Kafka tool (main class and arguments) against this broker's classpath; returns its output. */
  public String run(List<String> mainAndArgs, int timeoutSeconds) throws Exception {
    Process p = new ProcessBuilder(java(mainAndArgs)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", mainAndArgs) + " failed:\n" + out);
    }
    return out;
  }

  private void launch() throws Exception {
    process = ChildServer.start("broker", java(List.of("kafka.Kafka", dir.resolve("server.properties").toString())),
        dir.resolve("broker.log"), Duration.ofSeconds(60), () -> {
          try (Admin admin = admin()) {
            admin.describeCluster().nodes().get(2, TimeUnit.SECONDS);
          }
        });
  }

  /** The broker process' ID (for CPU and memory readings). */
  public long pid() {
    return process.pid();
  }

  public String bootstrap() {
    return "127.0.0.1:" + port;
  }

  /** A listener that requires SASL/PLAIN ({@link #SASL_USER}, {@link #SASL_PASSWORD}). */
  public String saslBootstrap() {
    return "127.0.0.1:" + saslPort;
  }

  public Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10000);
    return Admin.create(p);
  }

  /** Bytes of a partition's log on this broker (record batches as stored: compressed if produced so). */
  public long partitionBytes(String topic, int partition) throws Exception {
    org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, partition);
    try (Admin admin = admin()) {
      long size = 0;
      for (var dir : admin.describeLogDirs(List.of(1)).allDescriptions().get(30, TimeUnit.SECONDS).get(1).values()) {
        var info = dir.replicaInfos().get(tp);
        if (info != null) {
          size += info.size();
        }
      }
      return size;
    }
  }

  public void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
  }

  /** Stops the broker (SIGTERM, controlled shutdown). */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }

  /** Kills the broker (SIGKILL: no controlled shutdown, the log is recovered at the next start). */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }

  /** Starts the broker again with the same ports and data. */
  public void restart() throws Exception {
    launch();
  }

  /** {@code kafka-consumer-groups --describe --group G}, Kafka's own view of a group's offsets. */
  public String describeGroup(String group) throws Exception {
    return run(List.of("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
        bootstrap(), "--describe", "--group", group), 60);
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

}
