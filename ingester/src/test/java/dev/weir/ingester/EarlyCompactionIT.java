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
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Early head compaction in a Kafka catch-up (issue 19): a backlog of two hours of data in which
 * every ten minutes a rollout replaces all pods (12 generations of {@value #SERIES} series). The
 * ingester, started on it with a series threshold below the backlog's series, compacts its head
 * early while it catches up, so it holds about the series of the last hour instead of all of them;
 * every produced sample is found (blocks and head), again after a {@code kill -9} and restart.
 */
class EarlyCompactionIT {
  static final int GENERATIONS = 12;
  static final int SERIES = 2_000;
  /** Samples per series, one a minute: a generation lives ten minutes. */
  static final int SAMPLES = 10;
  static final int THRESHOLD = 3 * SERIES;
  static final String TENANT = "churn";

  @TempDir Path dir;

  @Test
  void aCatchUpWithSeriesChurnCompactsEarlyAndLosesNothing() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long newest = produceBacklog(c);
    try (WeirProcess ing = WeirProcess.launch(dir, c.args("--target=ingester", "--ingester.id=ingester-zone-a-0",
        "--ingest-storage.kafka.consumer-group=early-" + c.topic,
        "--blocks-storage.tsdb.early-head-compaction-min-in-memory-series=" + THRESHOLD,
        // a generation is 1/8 of the series at the end: a 5 % minimum lets the last old one go too
        "--blocks-storage.tsdb.early-head-compaction-min-estimated-series-reduction-percentage=5",
        "--blocks-storage.tsdb.early-head-compaction-check-interval=200ms"))) {
      ing.awaitReady(Duration.ofSeconds(120)); // ready once the partition is consumed
      assertThat(ing.metric("weir_ingester_ingested_samples_total{user=\"" + TENANT + "\"}"))
          .isEqualTo((double) GENERATIONS * SERIES * SAMPLES);

      // Generations whose last sample is older than the newest minus half the 2 h block range
      // (an hour: 6 generations) can leave; the ones of the last hour cannot.
      long cut = newest - 3_600_000L;
      int young = 0;
      for (int g = 0; g < GENERATIONS; g++) {
        young += lastSample(g) >= cut ? SERIES : 0;
      }
      int youngSeries = young;
      // (the counters move once a compaction's checkpoint is written, after the head shrank)
      await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> {
        assertThat(ing.metric("weir_ingester_memory_series{user=\"" + TENANT + "\"}"))
            .as("series in memory: those of the last hour of data").isLessThanOrEqualTo(youngSeries);
        assertThat(ing.metric("weir_tsdb_early_head_compaction_removed_series_total"))
            .as("series removed early; compaction log:%n%s", compactionLines(ing.log()))
            .isGreaterThanOrEqualTo((double) GENERATIONS * SERIES - youngSeries);
      });
      assertThat(ing.metric("weir_tsdb_early_head_compactions_total")).isPositive();
      assertThat(ing.log()).contains("msg=\"heads over the early compaction threshold\"")
          .contains("msg=\"head compacted early into block\"");
      assertEverySampleFound(ing);

      ing.kill();
      ing.restart();
      assertEverySampleFound(ing);
      Matcher replayed = Pattern.compile("msg=\"WAL replayed\" user=" + TENANT + " segments=\\d+ series=(\\d+)")
          .matcher(ing.log());
      int lastReplay = -1;
      while (replayed.find()) {
        lastReplay = Integer.parseInt(replayed.group(1));
      }
      assertThat(lastReplay).as("series after the replay: the head as it was, not the early-compacted ones again")
          .isBetween(1, youngSeries);
    }
  }

  private static String compactionLines(String log) {
    return String.join("\n", log.lines().filter(l -> l.contains("compact")).toList());
  }

  private static void assertEverySampleFound(WeirProcess ing) throws Exception {
    Map<String, ExportClient.Series> found = new ExportClient(ing.httpUrl())
        .export(TENANT, "{__name__=\"churn_requests_total\"}", "X-Read-Consistency", "strong");
    assertThat(found).hasSize(GENERATIONS * SERIES);
    assertThat(found.values().stream().mapToLong(s -> s.timestamps().size()).sum())
        .as("samples found (the export merges copies by timestamp)").isEqualTo((long) GENERATIONS * SERIES * SAMPLES);
  }

  private static long t0;

  private static long lastSample(int g) {
    return t0 + (g * SAMPLES + SAMPLES - 1) * 60_000L;
  }

  /** Minute by minute, the generation alive then; every record acknowledged. Returns the newest timestamp. */
  private static long produceBacklog(KafkaCluster c) {
    // 10 min into a 2 h block range: the normal compaction of that range waits for its end + 1 h,
    // which the backlog never reaches, so every series that leaves leaves by early compaction.
    long range = 2 * 3_600_000L;
    t0 = Math.floorDiv(System.currentTimeMillis() - 2 * range, range) * range + 600_000L;
    KafkaConfig kc = KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "producer");
    long newest = 0;
    try (Writer w = new Writer(kc, WriterMetrics.noop())) {
      for (int g = 0; g < GENERATIONS; g++) {
        for (int k = 0; k < SAMPLES; k++) {
          long ts = t0 + (g * SAMPLES + k) * 60_000L;
          WriteRequest.Builder b = WriteRequest.newBuilder();
          for (int s = 0; s < SERIES; s++) {
            b.addTimeseries(series(g, s, ts, k + s));
          }
          w.write(TENANT, Map.of(0, b.build()));
          newest = ts;
        }
      }
    }
    return newest;
  }

  private static TimeSeries series(int g, int s, long ts, double v) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    String[][] labels = {{"__name__", "churn_requests_total"}, {"job", "app"}, {"namespace", "team-" + s % 7},
        {"pod", "app-" + g + "-" + s}};
    for (String[] l : labels) {
      b.addLabels(Label.newBuilder().setName(l[0]).setValue(l[1]));
    }
    return b.addSamples(Sample.newBuilder().setTimestamp(ts).setValue(v)).build();
  }
}
