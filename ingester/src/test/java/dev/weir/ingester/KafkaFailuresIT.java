package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
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
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Failure paths of a Kafka-mode ingester process: poison records, a full disk, a broker restart. */
class KafkaFailuresIT {
  static final String TENANT = "failures";

  @TempDir Path dir;

  /** Records [from, to), each with {@code series} series, sample at t0 + k s. */
  static void produce(KafkaCluster c, long t0, int from, int to, int series) {
    try (Writer w = new Writer(KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "p"), WriterMetrics.noop())) {
      for (int k = from; k < to; k++) {
        WriteRequest.Builder b = WriteRequest.newBuilder();
        for (int s = 0; s < series; s++) {
          b.addTimeseries(TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("failures"))
              .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
              .addSamples(Sample.newBuilder().setTimestamp(t0 + k * 1000L).setValue(k)));
        }
        w.write(TENANT, Map.of(0, b.build()));
      }
    }
  }

  static void assertExactly(WeirProcess ing, long t0, int records, int series) throws Exception {
    Map<String, ExportClient.Series> got = new ExportClient(ing.httpUrl()).export(TENANT, "failures");
    assertThat(got).hasSize(series);
    for (ExportClient.Series s : got.values()) {
      assertThat(s.timestamps()).hasSize(records);
      for (int k = 0; k < records; k++) {
        assertThat(s.timestamps().get(k)).isEqualTo(t0 + k * 1000L);
      }
    }
  }

  private static void kcat(KafkaCluster c, Path file, String version) throws Exception {
    Process p = new ProcessBuilder("/usr/bin/kcat", "-P", "-b", c.broker.bootstrap(), "-t", c.topic, "-p", "0",
        "-k", TENANT, "-H", "weir-version=" + version, file.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("kcat: %s", out).isZero();
  }

  @Test
  void poisonRecordsFromKcatAndInvalidSamplesAreSkippedAndCountedAndConsumptionGoesOn() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long t0 = System.currentTimeMillis() - 600_000;
    try (WeirProcess ing = WeirProcess.start(dir.resolve("i"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-0"))) {
      produce(c, t0, 0, 10, 50);
      byte[] garbage = new byte[4096];
      new Random(3).nextBytes(garbage);
      garbage[0] = 0; // field number 0 is invalid: random bytes that could otherwise parse by chance
      Path random = Files.write(dir.resolve("random.bin"), garbage);
      kcat(c, random, "1");
      Path valid = Files.write(dir.resolve("valid.bin"), WriteRequest.newBuilder()
          .addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("x"))
              .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1))).build().toByteArray());
      kcat(c, valid, "99");
      // A record mixing invalid series and an out-of-order sample with valid ones.
      try (Writer w = new Writer(KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "p"), WriterMetrics.noop())) {
        w.write(TENANT, Map.of(0, WriteRequest.newBuilder()
            .addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("bad-name"))
                .addSamples(Sample.newBuilder().setTimestamp(t0 + 10_000)))
            .addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("failures"))
                .addLabels(Label.newBuilder().setName("series").setValue("0"))
                .addSamples(Sample.newBuilder().setTimestamp(t0 + 1_000).setValue(-1)))
            .build()));
      }
      produce(c, t0, 10, 20, 50);
      await().atMost(60, TimeUnit.SECONDS).until(() ->
          ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}") == 23.0);
      assertExactly(ing, t0, 20, 50);
      String relevant = String.join("\n", java.util.Arrays.stream(ing.get("/metrics").split("\n"))
          .filter(l -> l.contains("client_errors") || l.contains("discarded") || l.contains("records_processed"))
          .toList());
      assertThat(ing.metric("weir_ingest_storage_reader_records_processed_total{outcome=\"client_error\","
          + "partition=\"0\"}")).as(relevant).isEqualTo(2);
      assertThat(ing.metric("weir_ingest_storage_reader_client_errors_total{partition=\"0\","
          + "reason=\"undecodable_record\"}")).as(relevant).isEqualTo(1);
      assertThat(ing.metric("weir_ingest_storage_reader_client_errors_total{partition=\"0\","
          + "reason=\"unknown_record_version\"}")).as(relevant).isEqualTo(1);
      assertThat(ing.metric("weir_discarded_samples_total{reason=\"metric_name_invalid\",user=\"" + TENANT + "\"}"))
          .as(relevant).isEqualTo(1);
      assertThat(ing.metric("weir_discarded_samples_total{reason=\"sample_out_of_order\",user=\"" + TENANT
          + "\"}")).as(relevant).isEqualTo(1);
    }
  }

  @Test
  void aFullDiskHoldsTheCommittedOffsetUntilSpaceReturnsThenEverythingIsAppended() throws Exception {
    Path data = Files.createDirectories(dir.resolve("i/data"));
    Process m = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", data.toString())
        .redirectErrorStream(true).start();
    m.getInputStream().readAllBytes();
    Assumptions.assumeTrue(m.waitFor() == 0, "cannot mount tmpfs here (needs root / CAP_SYS_ADMIN)");
    try {
      KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
      c.broker.createTopic(c.topic, 1);
      long t0 = System.currentTimeMillis() - 600_000;
      try (WeirProcess ing = WeirProcess.start(dir.resolve("i"), c.args("--target=ingester",
          "--ingester.id=ingester-zone-a-0", "--blocks-storage.tsdb.wal-segment-size-bytes=1048576"))) {
        produce(c, t0, 0, 20, 200);
        await().atMost(60, TimeUnit.SECONDS).until(() ->
            ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}") == 20.0);
        Path filler = data.resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
          byte[] mb = new byte[1 << 20];
          while (true) {
            out.write(mb);
          }
        } catch (IOException full) {
          // full
        }
        produce(c, t0, 20, 60, 200);
        await().atMost(60, TimeUnit.SECONDS).until(() ->
            ing.metric("weir_ingest_storage_reader_retries_total{partition=\"0\"}") >= 3);
        Thread.sleep(1_500); // records that still fit before the failing one may commit once more
        double held = ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}");
        Thread.sleep(3_000); // three commit intervals: the offset must not move while appends fail
        assertThat(ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}")).isEqualTo(held);
        assertThat(held).isLessThan(60);
        Files.delete(filler);
        await().atMost(60, TimeUnit.SECONDS).until(() ->
            ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}") == 60.0);
        assertExactly(ing, t0, 60, 200);
        ing.kill();
        ing.restart();
        assertExactly(ing, t0, 60, 200);
      }
    } finally {
      new ProcessBuilder("umount", "-l", data.toString()).start().waitFor();
    }
  }

  @Test
  void aBrokerRestartMidConsumptionLosesNothing() throws Exception {
    try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
      KafkaCluster c = new KafkaCluster(broker, EtcdServer.shared());
      broker.createTopic(c.topic, 1);
      long t0 = System.currentTimeMillis() - 600_000;
      produce(c, t0, 0, 100, 500);
      try (WeirProcess ing = WeirProcess.launch(dir.resolve("i"), c.args("--target=ingester",
          "--ingester.id=ingester-zone-a-0"))) {
        await().atMost(60, TimeUnit.SECONDS).ignoreExceptions().until(() ->
            ing.metric("weir_ingest_storage_reader_records_total{partition=\"0\"}") > 0);
        broker.stop();
        Thread.sleep(5_000);
        assertThat(ing.isAlive()).isTrue();
        broker.restart();
        produce(c, t0, 100, 150, 500);
        ing.awaitReady(Duration.ofSeconds(120));
        await().atMost(90, TimeUnit.SECONDS).until(() ->
            ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}") == 150.0);
        assertExactly(ing, t0, 150, 500);
        assertThat(ing.metric("weir_ingest_storage_reader_missed_records_total{partition=\"0\"}")).isZero();
        assertThat(List.of(broker.describeGroup("ingester-zone-a-0"))).first().asString()
            .containsPattern("\\s150\\s+150\\s+0\\s");
      }
    }
  }
}
