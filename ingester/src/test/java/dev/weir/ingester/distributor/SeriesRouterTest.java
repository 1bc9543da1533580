package dev.weir.ingester.distributor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PushErrors;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.ring.partition.PartitionStateChange;
import dev.weir.ring.partition.PartitionTokens;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class SeriesRouterTest {
  static final long NOW = 1_700_000_000_000L;

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final IngesterMetrics metrics = new IngesterMetrics(registry, () -> NOW, 1_200_000);
  private final SeriesRouter router = new SeriesRouter(metrics, new RateLimitedLog(
      LoggerFactory.getLogger(SeriesRouterTest.class), TimeUnit.SECONDS.toNanos(1), System::nanoTime), () -> NOW);

  static PartitionRingDesc twoActivePartitions() {
    PartitionRingDesc.Builder b = PartitionRingDesc.newBuilder();
    Map<Integer, int[]> existing = new HashMap<>();
    for (int p = 0; p < 2; p++) {
      int[] tokens = PartitionTokens.forNewPartition(existing, 128);
      existing.put(p, tokens);
      b.putPartitions(p, PartitionDesc.newBuilder().setId(p).setState(PartitionState.PARTITION_ACTIVE)
          .addAllTokens(Arrays.stream(tokens).boxed().toList()).build());
    }
    return b.build();
  }

  private static WriteRequest request(int series) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < series; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
          .addLabels(Label.newBuilder().setName("instance").setValue("host-" + s))
          .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(s)));
    }
    return b.build();
  }

  private Map<Integer, WriteRequest.Builder> route(PartitionRing ring, WriteRequest req) {
    PushErrors errors = new PushErrors("t", metrics, new RateLimitedLog(LoggerFactory.getLogger(SeriesRouterTest.class),
        TimeUnit.SECONDS.toNanos(1), System::nanoTime));
    Map<Integer, WriteRequest.Builder> out = router.route("t", req, Limits.DEFAULT, ring::partitionFor, errors);
    assertThat(errors.any()).isFalse();
    return out;
  }

  @Test
  void noSeriesIsRoutedToAnInactivePartition() {
    PartitionRingDesc desc = twoActivePartitions();
    WriteRequest req = request(500);
    Map<Integer, WriteRequest.Builder> before = route(new PartitionRing(desc), req);
    assertThat(before).containsOnlyKeys(0, 1);

    PartitionRing drained = new PartitionRing(PartitionStateChange.apply(desc, 1, PartitionState.PARTITION_INACTIVE,
        NOW));
    Map<Integer, WriteRequest.Builder> after = route(drained, req);
    assertThat(after).containsOnlyKeys(0);
    assertThat(after.get(0).getTimeseriesCount()).as("every series still written, all to partition 0")
        .isEqualTo(500);
  }

  @Test
  void forwardsAHistogramOfSchemaAboveEightAtEight() {
    dev.weir.proto.prompb.Histogram fine = dev.weir.ingester.push.IngesterHistogramTest.schema12(NOW);
    WriteRequest req = WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("h")).addHistograms(fine)).build();
    Map<Integer, WriteRequest.Builder> out = route(new PartitionRing(twoActivePartitions()), req);
    dev.weir.proto.prompb.Histogram sent = out.values().iterator().next().getTimeseries(0).getHistograms(0);
    assertThat(sent.getSchema()).isEqualTo(8);
    assertThat(sent.getPositiveDeltasList()).containsExactly(6L, 3L, -3L); // 6, 9, 6
    assertThat(sent.getNegativeDeltasList()).containsExactly(2L, 1L, 1L); // 2, 3, 4
    assertThat(sent.getCountInt()).isEqualTo(31);
    assertThat(sent.getTimestamp()).isEqualTo(NOW);
  }
}
