package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.wire.WireBatch;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka records read again after a restart whose samples the head already compacted into a block:
 * they were counted when first read, so they count as duplicates, not as out-of-order discards; a
 * new record with the same samples still is a discard.
 */
class IngesterReReadTest {
  private static final long HOUR = 3_600_000L;
  private static final long T0 = 1_700_000_000_000L / (2 * HOUR) * (2 * HOUR);
  private static final long NOW = T0 + 5 * HOUR;
  private static final int RECORDS = 25; // one every 10 minutes: 4 hours, so the first 2 h compact

  @TempDir Path dir;
  private Ingester ingester;
  private PrometheusMeterRegistry registry;

  private void start() throws Exception {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), () -> NOW, t -> () -> 500);
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb, t -> Limits.DEFAULT,
        new IngesterMetrics(registry, () -> NOW, 1_200_000), () -> NOW);
    ingester.start();
  }

  @AfterEach
  void stop() {
    if (ingester != null) {
      ingester.stop();
    }
  }

  /** Kafka record {@code k}: one sample of series up{job="a"} at T0 + k × 10 min. */
  private void push(int k, long offset) {
    push("a", k, offset);
  }

  /** The same for up{job=...}. */
  private void push(String job, int k, long offset) {
    WriteRequest r = WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addLabels(Label.newBuilder().setName("job").setValue(job))
        .addSamples(Sample.newBuilder().setTimestamp(T0 + k * 600_000L).setValue(k))).build();
    ingester.push("tenant", WireBatch.scan(r.toByteArray()), true, offset);
  }

  private double metric(String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*\\} (\\S+)$").matcher(registry.scrape());
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  @Test
  void recordsReReadAfterARestartCountAsDuplicatesEvenWhenTheirSamplesAreInABlock() throws Exception {
    start();
    for (int k = 0; k < RECORDS; k++) {
      push(k, 100 + k);
    }
    ingester.tsdb().compactAll();
    ingester.stop();
    try (var files = Files.walk(dir)) {
      assertThat(files.filter(p -> p.getFileName().toString().equals("meta.json"))).as("a block was cut").isNotEmpty();
    }
    start();
    for (int k = 0; k < 5; k++) { // its first records, long compacted: re-read from offset 100
      push(k, 100 + k);
    }
    assertThat(metric("weir_discarded_samples_total")).as("not discards").isZero();
    assertThat(metric("weir_ingester_duplicate_samples_total")).isEqualTo(5);

    // The same sample in a record the WAL never had is a real out-of-order sample.
    assertThatThrownBy(() -> push(0, 100 + RECORDS)).isInstanceOf(ClientErrorException.class);
    assertThat(metric("weir_discarded_samples_total")).isEqualTo(1);
  }

  /**
   * A series whose samples all went into the block is gone from the head after the restart: its
   * re-read records neither count as discards nor bring it back empty (the samples are refused
   * before the series would be created, and counted as duplicates as the commit's refusals are).
   */
  @Test
  void reReadRecordsOfASeriesGoneFromTheHeadCountAsDuplicatesAndDoNotCreateIt() throws Exception {
    start();
    for (int k = 0; k < RECORDS; k++) {
      push(k, 100 + 2 * k);
      if (k < 5) {
        push("gone", k, 101 + 2 * k);
      }
    }
    ingester.tsdb().compactAll();
    ingester.stop();
    start();
    int before = ingester.tsdb().head("tenant").numSeries();
    assertThat(before).as("up{job=\"a\"} only").isEqualTo(1);
    for (int k = 0; k < 5; k++) {
      push("gone", k, 101 + 2 * k);
    }
    assertThat(metric("weir_discarded_samples_total")).as("not discards").isZero();
    assertThat(metric("weir_ingester_duplicate_samples_total")).isEqualTo(5);
    assertThat(ingester.tsdb().head("tenant").numSeries()).as("not created again").isEqualTo(1);

    // The same sample in a record the WAL never had is refused as too old, still without a series.
    assertThatThrownBy(() -> push("gone", 0, 100 + 2 * RECORDS)).isInstanceOf(ClientErrorException.class)
        .hasMessageContaining("too old for the head");
    assertThat(metric("weir_discarded_samples_total")).isEqualTo(1);
    assertThat(ingester.tsdb().head("tenant").numSeries()).isEqualTo(1);
  }
}
