package dev.weir.ingester.distributor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.api.ApiLimits;
import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.push.ExemplarsWritten;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterConfig;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PartialWriteException;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.Exemplar;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The classic distributor in front of a real ingester over an in-process gRPC server: the
 * exemplars it reports written ({@link ExemplarsWritten}, the RW2 {@code Exemplars-Written}
 * header) are exactly those the ingester's exemplar storage took.
 */
class ForwardingDistributorTest {
  static final long NOW = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final IngesterMetrics metrics = new IngesterMetrics(registry, () -> NOW, 1_200_000);
  /** Tenant "off" may keep no exemplar; every other tenant Prometheus' default. */
  private final Function<String, Limits> limits = t -> t.equals("off") ? exemplars(0) : Limits.DEFAULT;
  private Ingester ingester;
  private Server server;
  private ForwardingDistributor distributor;

  static Limits exemplars(int max) {
    Limits d = Limits.DEFAULT;
    return new Limits(d.maxLabelNamesPerSeries(), d.maxLabelNameLength(), d.maxLabelValueLength(),
        d.creationGracePeriod(), d.maxGlobalSeriesPerUser(), d.ingestionRate(), d.ingestionBurstSize(),
        d.compactorBlocksRetentionPeriod(), d.ingestionPartitionsTenantShardSize(), d.maxNativeHistogramBuckets(),
        d.reduceNativeHistogramOverMaxBuckets(), d.nativeHistogramsIngestionEnabled(), max, d.outOfOrderTimeWindow());
  }

  @BeforeEach
  void start() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), () -> NOW, t -> () -> 0);
    // As Weir wires it, except tenant "head-off", whose head keeps none though the distributor
    // forwards its exemplars (an override lowered between the two).
    tsdb.exemplarLimits(t -> () -> t.equals("head-off") ? 0 : limits.apply(t).maxGlobalExemplarsPerUser());
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb, limits, metrics,
        () -> NOW);
    ingester.start();
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(GrpcServer.definition(new IngesterGrpcService(ingester, ingester, ReadConsistency.IMMEDIATE,
            new ApiLimits(64 << 20, 10_000, 100_000, 0, 0), "ingester-0"),
            List.of(GrpcInterceptors.tenant(new Tenants(true, "anonymous")))))
        .build().start();
    RingDesc ring = RingDesc.newBuilder().putInstances("ingester-0", InstanceDesc.newBuilder().setId("ingester-0")
        .setAddr(name).setState(InstanceState.ACTIVE).setHeartbeatTimestamp(NOW).addTokens(0).build()).build();
    distributor = new ForwardingDistributor(limits, () -> new InstanceRing(ring, NOW, 60_000), metrics, () -> NOW,
        a -> InProcessChannelBuilder.forName(a).build());
  }

  @AfterEach
  void stop() {
    distributor.close();
    server.shutdownNow();
    ingester.stop();
  }

  static TimeSeries.Builder series(String name, long t, Exemplar.Builder... exemplars) {
    TimeSeries.Builder ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1));
    for (Exemplar.Builder e : exemplars) {
      ts.addExemplars(e);
    }
    return ts;
  }

  static Exemplar.Builder exemplar(String trace, long t) {
    return Exemplar.newBuilder().addLabels(Label.newBuilder().setName("trace_id").setValue(trace)).setValue(1)
        .setTimestamp(t);
  }

  static WriteRequest request(TimeSeries.Builder... series) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (TimeSeries.Builder s : series) {
      b.addTimeseries(s);
    }
    return b.build();
  }

  /** Pushes as the remote write endpoint does and returns the exemplars reported written, also when refused in part. */
  private long written(String tenant, WriteRequest r) {
    ExemplarsWritten.Tally tally = new ExemplarsWritten.Tally();
    try {
      tally.during(() -> distributor.push(tenant, r));
    } catch (PartialWriteException e) {
      // the count still stands: part of the request was stored
    }
    return tally.count();
  }

  private int stored(String tenant) {
    return ingester.exemplars(tenant, Long.MIN_VALUE, Long.MAX_VALUE,
        List.of(dev.weir.storage.tsdb.labels.Matcher.re("__name__", ".+"))).stream()
        .mapToInt(s -> s.exemplars().size()).sum();
  }

  @Test
  void countsTheExemplarsAnIngesterStored() {
    assertThat(written("t", request(series("a", NOW, exemplar("1", NOW)), series("b", NOW, exemplar("2", NOW),
        exemplar("3", NOW + 1))))).isEqualTo(3);
    assertThat(stored("t")).isEqualTo(3);
  }

  @Test
  void anExemplarOfARefusedSeriesIsNotWritten() {
    TimeSeries.Builder noName = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("job").setValue("x"))
        .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(1)).addExemplars(exemplar("9", NOW));
    WriteRequest r = request(series("a", NOW, exemplar("1", NOW)), noName);
    assertThatThrownBy(() -> distributor.push("t", r)).isInstanceOf(PartialWriteException.class);
    assertThat(written("t2", r)).isEqualTo(1);
    assertThat(stored("t2")).isEqualTo(1);
  }

  @Test
  void anExemplarWithoutLabelsIsNotWritten() {
    WriteRequest r = request(series("a", NOW, exemplar("1", NOW), Exemplar.newBuilder().setValue(2)
        .setTimestamp(NOW + 1)));
    assertThat(written("t", r)).isEqualTo(1);
    assertThat(stored("t")).isEqualTo(1);
  }

  @Test
  void anOutOfOrderExemplarRefusedByTheIngesterIsNotWritten() {
    assertThat(written("t", request(series("a", NOW, exemplar("1", NOW))))).isEqualTo(1);
    // The ingester refuses the older exemplar of "a" after storing the one of "b": its trailer
    // says how many it stored.
    WriteRequest r = request(series("a", NOW + 1, exemplar("0", NOW - 1)), series("b", NOW, exemplar("2", NOW)));
    assertThat(written("t", r)).isEqualTo(1);
    assertThat(stored("t")).isEqualTo(2);
  }

  @Test
  void aDuplicateOfAStoredExemplarCountsAsWrittenAsPrometheusCountsIt() {
    WriteRequest r = request(series("a", NOW, exemplar("1", NOW)));
    assertThat(written("t", r)).isEqualTo(1);
    // The retry of the same request: the exemplar is stored (once), the header says so.
    assertThat(written("t", request(series("a", NOW + 1, exemplar("1", NOW))))).isEqualTo(1);
    assertThat(stored("t")).isEqualTo(1);
  }

  @Test
  void noExemplarIsWrittenForATenantThatKeepsNone() {
    WriteRequest r = request(series("a", NOW, exemplar("1", NOW)), series("b", NOW, exemplar("2", NOW)));
    assertThat(written("off", r)).isZero();
    assertThat(stored("off")).isZero();
  }

  @Test
  void noExemplarIsWrittenWhenTheIngestersHeadKeepsNone() {
    WriteRequest r = request(series("a", NOW, exemplar("1", NOW)));
    assertThat(written("head-off", r)).isZero();
    assertThat(stored("head-off")).isZero();
  }
}
