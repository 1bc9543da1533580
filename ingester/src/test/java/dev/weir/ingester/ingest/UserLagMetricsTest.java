package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterConfig;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UserLagMetricsTest {
  static final long NOW = 1_700_000_000_000L;

  @TempDir Path dir;
  final AtomicLong clock = new AtomicLong(NOW);
  final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  Ingester ingester;

  @AfterEach
  void stop() {
    if (ingester != null) {
      ingester.stop();
    }
  }

  private void write(String tenant, long t) {
    ingester.push(tenant, WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1))).build());
  }

  @Test
  void exportsTheFirstTenantsUpToTheMaximumAndCountsTheRest() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), clock::get, t -> () -> 0);
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb,
        t -> new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0), new IngesterMetrics(registry, clock::get, 1_200_000),
        clock::get);
    ingester.start();
    write("team-a", NOW - 5_000);
    write("team-b", NOW - 1_000);
    List<PartitionFreshness> fresh = List.of(new PartitionFreshness(4, 10, 12, 2, NOW - 7_250, true));
    UserLagMetrics m = new UserLagMetrics(registry, tsdb, () -> fresh, 2, clock::get);
    m.refresh();
    write("team-c", NOW);
    m.refresh();

    String scrape = registry.scrape();
    assertThat(scrape).contains("weir_ingester_user_lag_seconds{partition=\"4\",user=\"team-a\"} 7.25")
        .contains("weir_ingester_user_lag_seconds{partition=\"4\",user=\"team-b\"} 7.25")
        .contains("weir_ingester_user_newest_sample_timestamp_seconds{user=\"team-a\"} " + (NOW - 5_000) / 1000.0)
        .doesNotContain("weir_ingester_user_lag_seconds{partition=\"4\",user=\"team-c\"}")
        .doesNotContain("weir_ingester_user_newest_sample_timestamp_seconds{user=\"team-c\"}")
        .contains("weir_ingester_user_lag_metrics_tenants_not_exported 1.0");

    clock.addAndGet(1_000);
    assertThat(registry.scrape()).as("values are read at scrape time")
        .contains("weir_ingester_user_lag_seconds{partition=\"4\",user=\"team-a\"} 8.25");
    m.stop();
    assertThat(registry.scrape()).doesNotContain("weir_ingester_user_lag_seconds{");
  }
}
