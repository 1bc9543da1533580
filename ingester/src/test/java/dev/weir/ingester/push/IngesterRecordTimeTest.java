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
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka reader's appends judge "too far in the future" against the record's timestamp (its
 * produce time), not the ingester's clock; other pushes against the clock.
 */
class IngesterRecordTimeTest {
  private static final long NOW = 1_700_000_000_000L;
  private static final long GRACE = Duration.ofMinutes(10).toMillis();

  @TempDir Path dir;
  private Ingester ingester;
  private PrometheusMeterRegistry registry;

  @BeforeEach
  void start() throws Exception {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), () -> NOW, t -> () -> 0);
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb, t -> Limits.DEFAULT,
        new IngesterMetrics(registry, () -> NOW, 1_200_000), () -> NOW);
    ingester.start();
  }

  @AfterEach
  void stop() throws Exception {
    ingester.stop();
  }

  private static WireBatch sample(String job, long t) {
    return WireBatch.scan(WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addLabels(Label.newBuilder().setName("job").setValue(job))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1))).build().toByteArray());
  }

  @Test
  void aRecordIsJudgedAgainstItsOwnTimestamp() {
    long recordTime = NOW + 3_600_000; // a producer whose clock was an hour ahead of this ingester's
    ingester.push("t", sample("a", recordTime + GRACE), false, 1, recordTime);
    assertThatThrownBy(() -> ingester.push("t", sample("b", recordTime + GRACE + 1), false, 2, recordTime))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("too far in the");
    // hours-old records: what was valid when written is valid now, and what was not still is not
    long old = NOW - 5 * 3_600_000;
    ingester.push("old", sample("c", old + GRACE), false, 3, old);
    assertThatThrownBy(() -> ingester.push("old", sample("d", old + GRACE + 1), false, 4, old))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("too far in the");
  }

  @Test
  void withoutARecordTimestampTheClockDecides() {
    ingester.push("t", sample("a", NOW + GRACE), false, 1, -1);
    assertThatThrownBy(() -> ingester.push("t", sample("b", NOW + GRACE + 1), false, 2, -1))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("too far in the");
    assertThatThrownBy(() -> ingester.push("t", sample("c", NOW + GRACE + 1), false))
        .isInstanceOf(ClientErrorException.class);
  }
}
