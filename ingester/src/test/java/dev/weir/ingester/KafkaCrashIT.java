package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kill -9 of a Kafka-mode ingester at 10 random moments while it consumes a backlog of 3 million
 * samples: after each restart it resumes from its committed offset; at the end every sample is
 * present exactly once, the group's lag is 0 as Kafka's own kafka-consumer-groups reports it, and
 * the ingester's last-committed-offset metric equals Kafka's CURRENT-OFFSET.
 */
class KafkaCrashIT {
  static final int SERIES = 30_000;
  static final int SAMPLES = 100;
  static final int PER_RECORD = 1_000;

  @TempDir Path dir;

  @Test
  void resumesAfterEveryKillAndEndsWithEverySampleExactlyOnce() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long t0 = System.currentTimeMillis() - 3_600_000L;
    KafkaConfig kc = KafkaConfig.defaults(c.broker.bootstrap(), c.topic, "producer");
    try (Writer w = new Writer(kc, WriterMetrics.noop())) {
      for (int k = 0; k < SAMPLES; k++) {
        for (int from = 0; from < SERIES; from += PER_RECORD) {
          WriteRequest.Builder b = WriteRequest.newBuilder();
          for (int s = from; s < from + PER_RECORD; s++) {
            b.addTimeseries(TimeSeries.newBuilder()
                .addLabels(Label.newBuilder().setName("__name__").setValue("backlog"))
                .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
                .addSamples(Sample.newBuilder().setTimestamp(t0 + k * 10_000L).setValue(k * 1_000_000.0 + s)));
          }
          w.write("crash", Map.of(0, b.build()));
        }
      }
    }
    long records = (long) SAMPLES * SERIES / PER_RECORD;
    Random random = new Random(5);
    String group = "ingester-zone-a-0";
    try (WeirProcess ing = WeirProcess.launch(dir, c.args("--target=ingester", "--ingester.id=" + group,
        "--ingest-storage.kafka.max-consumer-lag-at-startup=5s", "--log.progress-interval=1ms"))) {
      int kills = 0;
      long lastCommitted = -1;
      int midBacklog = 0;
      while (kills < 10) {
        // Kill at a random moment once this run of the reader is consuming.
        int runs = kills + 1;
        await().atMost(120, TimeUnit.SECONDS).until(() ->
            ing.log().split("msg=\"partition reader starting\"", -1).length - 1 >= runs);
        Thread.sleep(200 + random.nextInt(700));
        ing.kill();
        kills++;
        long committed = committedOffset(c.broker.describeGroup(group), c.topic);
        assertThat(committed).as("committed offset never goes back (kill %d)", kills)
            .isGreaterThanOrEqualTo(lastCommitted);
        System.out.printf("kill %d: committed offset %d of %d records%n", kills, committed, records);
        lastCommitted = committed;
        if (committed < records) {
          midBacklog++;
        }
        ing.relaunch();
      }
      ing.awaitReady(Duration.ofSeconds(300));
      // The reader resumes faster than it used to; what matters is that most kills hit a partial backlog.
      assertThat(midBacklog).as("kills that landed while the backlog was consumed").isGreaterThanOrEqualTo(5);
      assertThat(ing.log()).contains("msg=\"partition reader starting\"").contains("from=\"committed offset");

      // Every restart replayed the WAL and caught up on the backlog, logging its progress.
      String log = ing.log();
      assertThat(log).contains("msg=\"WAL replay starting\"").contains("msg=\"WAL replay done\"")
          .contains("msg=\"catch-up starting\" partition=0").contains("msg=\"catch-up done\" partition=0");
      assertProgressLines(log, "WAL replay", "bytes");
      assertProgressLines(log, "catch-up", "records");
      // The ring page shows how this instance's last replay and catch-up ended.
      JsonNode page = new ObjectMapper().readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(ing.httpUrl() + "/ingester/partition-ring")).header("Accept", "application/json").build(),
          HttpResponse.BodyHandlers.ofString()).body());
      assertThat(page.path("progress")).anySatisfy(p -> {
        assertThat(p.path("phase").asText()).isEqualTo("catch-up");
        assertThat(p.path("context").asText()).isEqualTo("partition=0");
        assertThat(p.path("finished").asBoolean()).isTrue();
        assertThat(p.path("done").asLong()).isEqualTo(p.path("total").asLong());
      }).anySatisfy(p -> {
        assertThat(p.path("phase").asText()).isEqualTo("WAL replay");
        assertThat(p.path("unit").asText()).isEqualTo("bytes");
        assertThat(p.path("finished").asBoolean()).isTrue();
        assertThat(p.path("done").asLong()).isPositive().isLessThanOrEqualTo(p.path("total").asLong());
      });

      // Every sample exactly once.
      HttpResponse<java.io.InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create(ing.httpUrl() + "/api/v1/export?match[]=backlog"))
          .header("X-Scope-OrgID", "crash").header("X-Read-Consistency", "strong").build(),
          HttpResponse.BodyHandlers.ofInputStream());
      ObjectMapper json = new ObjectMapper();
      int seen = 0;
      try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body()))) {
        String line;
        while ((line = in.readLine()) != null) {
          JsonNode n = json.readTree(line);
          int s = n.get("metric").get("series").asInt();
          assertThat(n.get("timestamps")).as("series %d", s).hasSize(SAMPLES);
          for (int k = 0; k < SAMPLES; k++) {
            assertThat(n.get("timestamps").get(k).asLong()).isEqualTo(t0 + k * 10_000L);
            assertThat(n.get("values").get(k).asDouble()).isEqualTo(k * 1_000_000.0 + s);
          }
          seen++;
        }
      }
      assertThat(seen).isEqualTo(SERIES);

      // Kafka's own view: the group is at the end with lag 0, and the metric agrees.
      await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> {
        String describe = c.broker.describeGroup(group);
        assertThat(committedOffset(describe, c.topic)).isEqualTo(records);
        assertThat(describe).containsPattern("\\s" + records + "\\s+" + records + "\\s+0\\s");
        assertThat(ing.metric("weir_ingest_storage_reader_last_committed_offset{partition=\"0\"}"))
            .isEqualTo((double) records);
      });
    }
  }

  /** At least one periodic line of {@code phase}, each with done/total in {@code unit}, percent, rate and ETA. */
  static void assertProgressLines(String log, String phase, String unit) {
    Matcher m = Pattern.compile("msg=\"" + phase + " progress\" .*?done=(\\d+) total=(\\d+) unit=" + unit
        + " percent=(\\d+\\.\\d|unknown) rate_per_s=(\\d+|unknown) eta_s=(\\d+|unknown)").matcher(log);
    int lines = 0;
    while (m.find()) {
      lines++;
      assertThat(Long.parseLong(m.group(1))).as(m.group()).isLessThanOrEqualTo(Long.parseLong(m.group(2)));
      assertThat(Long.parseLong(m.group(2))).as(m.group()).isPositive();
    }
    assertThat(lines).as("%s progress lines", phase).isPositive();
  }

  /**
   * CURRENT-OFFSET of the topic's partition 0 in kafka-consumer-groups --describe output; -1 when
   * none. Only the topic's row: on the shared broker other tests commit under the same group name
   * for their own topics.
   */
  static long committedOffset(String describe, String topic) {
    Matcher m = Pattern.compile("\\s" + Pattern.quote(topic) + "\\s+0\\s+(\\d+|-)\\s+(\\d+)\\s+(\\d+|-)\\s")
        .matcher(describe);
    if (!m.find()) {
      return -1;
    }
    return m.group(1).equals("-") ? -1 : Long.parseLong(m.group(1));
  }
}
