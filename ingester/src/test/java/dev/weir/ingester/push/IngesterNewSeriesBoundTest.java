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
import dev.weir.storage.tsdb.head.RejectReason;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.wire.WireBatch;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new series whose samples the head would refuse as too old is not created (Prometheus'
 * appender checks the bound before {@code getOrCreate}): the samples are refused with the reason
 * and message of the commit's refusal, and the head holds no empty series for them. Both push
 * paths (remote write bytes and a decoded request) are covered.
 */
class IngesterNewSeriesBoundTest {
  private static final long HOUR = 3_600_000L;
  private static final long NOW = 1_700_000_000_000L;
  private static final String TENANT = "tenant";

  @TempDir Path dir;
  private Ingester ingester;
  private PrometheusMeterRegistry registry;

  private void start(long oooWindowMillis) throws Exception {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), () -> NOW, t -> () -> 500);
    tsdb.outOfOrderWindows(t -> () -> oooWindowMillis);
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

  private static WriteRequest request(String job, long... times) {
    TimeSeries.Builder ts = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addLabels(Label.newBuilder().setName("job").setValue(job));
    for (long t : times) {
      ts.addSamples(Sample.newBuilder().setTimestamp(t).setValue(t / 1000.0));
    }
    return WriteRequest.newBuilder().addTimeseries(ts).build();
  }

  private void pushBytes(String job, long... times) {
    ingester.push(TENANT, WireBatch.scan(request(job, times).toByteArray()));
  }

  private TenantHead head() {
    return ingester.tsdb().head(TENANT);
  }

  /** Samples stored for up{job=...}; 0 when there is no such series. */
  private int stored(String job) {
    List<SeriesChunks> s = ingester.select(TENANT, Long.MIN_VALUE, Long.MAX_VALUE,
        List.of(Matcher.eq("__name__", "up"), Matcher.eq("job", job)));
    return s.isEmpty() ? 0 : s.get(0).samples(Long.MIN_VALUE, Long.MAX_VALUE).size();
  }

  /** The sum of a counter's series with this reason label ("": all). */
  private double metric(String name, String reason) {
    java.util.regex.Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$").matcher(registry.scrape());
    double sum = 0;
    while (m.find()) {
      if (reason.isEmpty() || m.group(1).contains("reason=\"" + reason + "\"")) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return sum;
  }

  @Test
  void aNewSeriesWithOnlyOutOfBoundsSamplesIsNotCreated() throws Exception {
    start(0);
    pushBytes("a", NOW - 60_000); // the head's newest time: in-order bound NOW - 1 min - 1 h
    assertThat(head().numSeries()).isEqualTo(1);

    String refused = refusal(() -> pushBytes("b", NOW - 2 * HOUR, NOW - 3 * HOUR));

    assertThat(head().numSeries()).as("no series for samples the head refuses").isEqualTo(1);
    // What the commit said when the series was created first (Rejection.message).
    assertThat(refused).startsWith("sample_out_of_bounds: " + RejectReason.OUT_OF_BOUNDS.description()
        + " (timestamp=" + (NOW - 2 * HOUR) + ", value=").contains("job=\"b\"");
    assertThat(metric("weir_discarded_samples_total", "sample_out_of_bounds")).isEqualTo(2);
    assertThat(stored("a")).isEqualTo(1);
    assertThat(stored("b")).isZero();
  }

  /** The message of the refusal a push ends with, after its reason. */
  private static String refusal(Runnable push) {
    try {
      push.run();
    } catch (ClientErrorException e) {
      return e.reason() + ": " + e.getMessage();
    }
    throw new AssertionError("the push was not refused");
  }

  @Test
  void aNewSeriesIsCreatedAtItsFirstSampleInBoundsAndKeepsItsLaterOnes() throws Exception {
    start(0);
    pushBytes("a", NOW - 60_000);
    // Decoded request path: the old sample is refused, the series is created by the next one.
    assertThatThrownBy(() -> ingester.push(TENANT, request("c", NOW - 2 * HOUR, NOW - 30_000, NOW - 20_000), true))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("too old for the head");
    assertThat(head().numSeries()).isEqualTo(2);
    assertThat(metric("weir_discarded_samples_total", "sample_out_of_bounds")).isEqualTo(1);
    assertThat(stored("c")).isEqualTo(2);
  }

  @Test
  void withAnOutOfOrderWindowOnlySamplesBeyondTheWindowAreRefusedBeforeCreation() throws Exception {
    start(3 * HOUR);
    assertThat(head().newSeriesBound().below()).as("an empty head: nothing certain").isEqualTo(Long.MIN_VALUE);
    pushBytes("a", NOW - 60_000);

    pushBytes("inside", NOW - 2 * HOUR); // out of order, inside the window: stored
    String beyond = refusal(() -> pushBytes("beyond", NOW - 4 * HOUR));

    assertThat(beyond).startsWith("sample_too_old");
    assertThat(head().numSeries()).as("a and inside").isEqualTo(2);
    assertThat(stored("inside")).isEqualTo(1);
    assertThat(metric("weir_discarded_samples_total", "sample_too_old")).isEqualTo(1);
  }

  /**
   * Only series that do not exist are refused before the commit: a resent old sample of an
   * existing series stays a silent duplicate, and an old new sample of one stays out of order,
   * on the decoded path (gRPC push, OTLP), on the bytes path with labels it cannot key (non-ASCII)
   * and with an out-of-order window.
   */
  @Test
  void theSamplesOfExistingSeriesAreLeftToTheCommit() throws Exception {
    start(0);
    long old = NOW - 90 * 60_000L;
    // Both series in one request into the empty head: nothing is out of bounds yet.
    ingester.push(TENANT, WriteRequest.newBuilder().addTimeseries(request("a", old, NOW - 60_000).getTimeseries(0))
        .addTimeseries(request("é", old, NOW - 60_000).getTimeseries(0)).build(), true);
    ingester.push(TENANT, request("a", old), true); // decoded path: a retried request
    pushBytes("é", old); // bytes path, labels not keyed (non-ASCII)
    assertThat(metric("weir_ingester_duplicate_samples_total", "")).isEqualTo(2);
    assertThat(metric("weir_discarded_samples_total", "")).isZero();

    assertThat(refusal(() -> ingester.push(TENANT, request("a", NOW - 80 * 60_000L), true)))
        .startsWith("sample_out_of_order");
    assertThat(head().numSeries()).isEqualTo(2);
  }

  @Test
  void withAWindowAResentOutOfOrderSampleOfAnExistingSeriesIsADuplicate() throws Exception {
    start(30 * 60_000L);
    long minute = 60_000L;
    ingester.push(TENANT, request("a", NOW - 100 * minute), true);
    // b's second sample is out of order, inside the window of the head's newest time then.
    ingester.push(TENANT, request("b", NOW - 100 * minute, NOW - 110 * minute), true);
    ingester.push(TENANT, request("a", NOW - minute), true);
    assertThat(head().newSeriesBound().below()).as("b's out-of-order sample is under the bound now")
        .isGreaterThan(NOW - 110 * minute);

    ingester.push(TENANT, request("b", NOW - 110 * minute), true); // resent: found, a duplicate
    assertThat(metric("weir_ingester_duplicate_samples_total", "")).isEqualTo(1);
    assertThat(metric("weir_discarded_samples_total", "")).isZero();
    assertThat(refusal(() -> ingester.push(TENANT, request("c", NOW - 110 * minute), true)))
        .startsWith("sample_too_old");
    assertThat(head().numSeries()).isEqualTo(2);
  }

  /** The commit's refusals are reported first, as when the refusal of a new series came from it. */
  @Test
  void theCommitsRefusalsStayTheFirstError() throws Exception {
    start(0);
    pushBytes("a", NOW - 60_000);
    WriteRequest both = WriteRequest.newBuilder()
        .addTimeseries(request("a", NOW - 30 * 60_000L).getTimeseries(0))
        .addTimeseries(request("new", NOW - 2 * HOUR).getTimeseries(0)).build();
    String first = refusal(() -> ingester.push(TENANT, WireBatch.scan(both.toByteArray())));
    assertThat(first).startsWith("sample_out_of_order");
    assertThat(metric("weir_discarded_samples_total", "sample_out_of_bounds")).isEqualTo(1);
    assertThat(metric("weir_discarded_samples_total", "sample_out_of_order")).isEqualTo(1);
  }
}
