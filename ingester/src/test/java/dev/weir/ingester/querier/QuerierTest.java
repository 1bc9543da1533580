package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.api.ApiLimits;
import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.api.ReadSource;
import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterConfig;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.RequestMetrics;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.proto.ring.PartitionRingDesc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The querier over real gRPC stubs and in-process servers: one real ingester (its gRPC service
 * over a real TSDB) and two store-gateway stand-ins with canned data ({@link FakeStoreGateway}).
 */
class QuerierTest {
  static final long NOW = 1_700_000_000_000L;
  static final long MIN = 60_000;
  static final String TENANT = "team-a";

  @TempDir Path dir;
  final AtomicLong clock = new AtomicLong(NOW);
  final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final AtomicInteger strongReads = new AtomicInteger();
  final List<ReadLevel> levels = new java.util.concurrent.CopyOnWriteArrayList<>();
  volatile List<PartitionFreshness> freshness = List.of();
  final String prefix = InProcessServerBuilder.generateName();
  final List<Server> servers = new ArrayList<>();
  Ingester ingester;
  FakeStoreGateway sg1;
  FakeStoreGateway sg2;
  QuerySources sources;

  static TimeSeries series(String name, String job, long... tv) {
    TimeSeries.Builder b = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("job").setValue(job));
    for (int i = 0; i < tv.length; i += 2) {
      b.addSamples(Sample.newBuilder().setTimestamp(tv[i]).setValue(tv[i + 1]));
    }
    return b.build();
  }

  @BeforeEach
  void setUp() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), clock::get, t -> () -> 0);
    tsdb.exemplarLimits(t -> () -> 10);
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb,
        t -> new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0), new IngesterMetrics(registry, clock::get, 1_200_000),
        clock::get);
    ingester.start();
    ingester.push(TENANT, WriteRequest.newBuilder()
        .addTimeseries(series("up", "api", NOW - 3 * MIN, 1, NOW - 2 * MIN, 1, NOW - MIN, 1))
        .addTimeseries(series("requests", "api", NOW - 2 * MIN, 20, NOW - MIN, 30)).build());
    ReadConsistency consistency = new ReadConsistency() {
      @Override
      public void await(ReadLevel level) {
        levels.add(level);
        if (level.strong()) {
          strongReads.incrementAndGet();
        }
      }

      @Override
      public List<PartitionFreshness> freshness() {
        return freshness;
      }
    };
    serve("ingester", GrpcServer.definition(new IngesterGrpcService(ingester, ingester, consistency,
        ApiLimits.DEFAULT, "ingester-0"), List.of(GrpcInterceptors.tenant(new Tenants(true, "anonymous")))));
    // Older data, overlapping the ingester at NOW - 3 min with the same value.
    sg1 = new FakeStoreGateway(List.of(series("up", "api", NOW - 5 * MIN, 1, NOW - 4 * MIN, 0, NOW - 3 * MIN, 1)));
    // Another series, and a conflicting value at a timestamp the ingester has (the ingester wins).
    sg2 = new FakeStoreGateway(List.of(series("up", "batch", NOW - 9 * MIN, 1),
        series("requests", "api", NOW - 4 * MIN, 5, NOW - 2 * MIN, 999)));
    serve("sg-1", ServerInterceptors.intercept(sg1, sg1.recorder()));
    serve("sg-2", ServerInterceptors.intercept(sg2, sg2.recorder()));
  }

  private void serve(String name, io.grpc.ServerServiceDefinition service) throws Exception {
    servers.add(InProcessServerBuilder.forName(prefix + name).addService(service).build().start());
  }

  Querier querier(Duration timeout, Duration ingestersWithin, Duration storeAfter, QueryLimits limits) {
    QuerierConfig config = new QuerierConfig(List.of(prefix + "sg-1", prefix + "sg-2"), List.of(prefix + "ingester"),
        storeAfter, ingestersWithin, timeout, limits.maxSamples(), Duration.ZERO, false);
    sources = new QuerySources(config, false, "", () -> new InstanceRing(RingDesc.getDefaultInstance(), NOW, 1),
        () -> new PartitionRing(PartitionRingDesc.getDefaultInstance()),
        () -> new InstanceRing(RingDesc.getDefaultInstance(), NOW, 1), () -> true,
        addr -> InProcessChannelBuilder.forName(addr).build());
    sources.start();
    return new Querier(config, sources, limits, new QuerierMetrics(registry), clock::get);
  }

  /** A querier that finds sg-1 and sg-2 in a store-gateway ring, both ACTIVE: replicas of each other. */
  Querier querierOverStoreGatewayRing() {
    RingDesc.Builder ring = RingDesc.newBuilder();
    for (String name : List.of("sg-1", "sg-2")) {
      ring.putInstances(name, InstanceDesc.newBuilder().setId(name).setAddr(prefix + name)
          .setState(InstanceState.ACTIVE).setHeartbeatTimestamp(NOW).build());
    }
    QuerierConfig config = new QuerierConfig(List.of(), List.of(prefix + "ingester"), Duration.ZERO, Duration.ZERO,
        Duration.ofSeconds(30), 0, Duration.ZERO, false);
    sources = new QuerySources(config, false, "", () -> new InstanceRing(RingDesc.getDefaultInstance(), NOW, 1),
        () -> new PartitionRing(PartitionRingDesc.getDefaultInstance()), () -> new InstanceRing(ring.build(), NOW,
        60_000), () -> true, addr -> InProcessChannelBuilder.forName(addr).build());
    sources.start();
    // Replicas hold the same blocks.
    sg2.series.clear();
    sg2.series.addAll(sg1.series);
    return new Querier(config, sources, QueryLimits.UNLIMITED, new QuerierMetrics(registry), clock::get);
  }

  /** The store-gateway fake the querier asks first for {@link #TENANT}, then the other. */
  List<FakeStoreGateway> replicaOrder() {
    String first = sources.storeGateways(TENANT).get(0).replicas().get(0).address();
    return first.equals(prefix + "sg-1") ? List.of(sg1, sg2) : List.of(sg2, sg1);
  }

  Querier querier() {
    return querier(Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, QueryLimits.UNLIMITED);
  }

  @AfterEach
  void tearDown() {
    if (sources != null) {
      sources.stop();
    }
    servers.forEach(Server::shutdownNow);
    ingester.stop();
  }

  /** Each series' samples as "t=v" with t in minutes before NOW. */
  static Map<String, List<String>> text(List<SeriesChunks> series) {
    Map<String, List<String>> out = new TreeMap<>();
    for (SeriesChunks s : series) {
      SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
      List<String> list = new ArrayList<>();
      for (int i = 0; i < samples.size(); i++) {
        list.add((NOW - samples.timestamps()[i]) / MIN + "m=" + samples.values()[i]);
      }
      out.put(s.labels().toString(), list);
    }
    return out;
  }

  static List<Matcher> name(String metric) {
    return List.of(Matcher.eq("__name__", metric));
  }

  @Test
  void selectAnswersTheUnionOfIngesterAndStoreGatewaysWithCopiesMergedAndTheIngesterWinningAConflict() {
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThat(text(r.select(0, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+"))))).containsExactly(
        Map.entry("requests{job=\"api\"}", List.of("4m=5.0", "2m=20.0", "1m=30.0")),
        Map.entry("up{job=\"api\"}", List.of("5m=1.0", "4m=0.0", "3m=1.0", "2m=1.0", "1m=1.0")),
        Map.entry("up{job=\"batch\"}", List.of("9m=1.0")));
    assertThat(registry.scrape()).contains("weir_querier_merged_duplicate_samples_total 1.0")
        .contains("weir_querier_merged_conflicting_samples_total 1.0");
  }

  @Test
  void selectCutsToTheRangeAndAppliesMatchersOnEverySource() {
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThat(text(r.select(NOW - 4 * MIN, NOW - 2 * MIN, List.of(Matcher.eq("job", "api"), Matcher.eq("__name__", "up")))))
        .containsExactly(Map.entry("up{job=\"api\"}", List.of("4m=0.0", "3m=1.0", "2m=1.0")));
    QueryRequest sent = (QueryRequest) sg1.requests.get(0);
    assertThat(sent.getStartTimestampMs()).isEqualTo(NOW - 4 * MIN);
    assertThat(sent.getMatchersCount()).isEqualTo(2);
  }

  @Test
  void mergedSeriesTravelAsXorChunksOfAtMost120Samples() {
    List<TimeSeries> many = new ArrayList<>();
    TimeSeries.Builder b = series("dense", "x").toBuilder();
    for (int i = 0; i < 300; i++) {
      b.addSamples(Sample.newBuilder().setTimestamp(NOW - 300_000 + i * 1000L).setValue(i * 0.5));
    }
    many.add(b.build());
    sg1.series.addAll(many);
    SeriesChunks s = querier().reader(TENANT, false).select(0, Long.MAX_VALUE, name("dense")).get(0);
    assertThat(s.chunks()).extracting(c -> c.maxTime() - c.minTime()).containsExactly(119_000L, 119_000L, 59_000L);
    assertThat(s.chunks()).extracting(ChunkData::minTime).containsExactly(NOW - 300_000, NOW - 180_000, NOW - 60_000);
    SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
    assertThat(samples.size()).isEqualTo(300);
    assertThat(samples.values()[299]).isEqualTo(149.5);
  }

  @Test
  void labelNamesAndValuesAreTheSortedUnionOfTheSources() {
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThat(r.labelNames(0, Long.MAX_VALUE, List.of())).containsExactly("__name__", "job");
    assertThat(r.labelValues("job", 0, Long.MAX_VALUE, List.of())).containsExactly("api", "batch");
    assertThat(r.labelValues("__name__", 0, Long.MAX_VALUE, List.of(Matcher.eq("job", "api"))))
        .containsExactly("requests", "up");
  }

  @Test
  void theTenantGoesToEverySourceAndAStrongReadOnlyToIngestersWhichHonourIt() {
    Querier q = querier();
    q.reader(TENANT, false).select(0, Long.MAX_VALUE, name("up"));
    assertThat(strongReads).hasValue(0);
    ReadSource.Reader strong = q.reader(TENANT, true);
    strong.select(0, Long.MAX_VALUE, name("up"));
    strong.labelNames(0, Long.MAX_VALUE, List.of());
    assertThat(strongReads).as("the ingester awaited strong consistency once per call").hasValue(2);
    for (Metadata md : sg1.headers) {
      assertThat(md.get(GrpcInterceptors.ORG_ID)).isEqualTo(TENANT);
      assertThat(md.get(GrpcInterceptors.READ_CONSISTENCY)).isNull();
    }
    assertThat(sg1.headers).hasSize(3);
  }

  @Test
  void everyCallBringsBackTheIngestersFreshnessEvenWithoutSeries() {
    freshness = List.of(new PartitionFreshness(3, 90, 100, 10, NOW - 7_000, true));
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThat(r.freshness()).isEmpty();
    assertThat(r.select(0, Long.MAX_VALUE, name("nothing_matches"))).isEmpty();
    assertThat(r.freshness()).containsExactly(freshness.get(0));
    freshness = List.of(new PartitionFreshness(3, 95, 100, 5, NOW - 3_000, false));
    r.labelNames(0, Long.MAX_VALUE, List.of());
    assertThat(r.freshness()).as("the least consumed answer, and not ready if any said so")
        .containsExactly(new PartitionFreshness(3, 90, 100, 10, NOW - 7_000, false));
  }

  @Test
  void readConsistencyOffsetsGoToIngestersOnly() {
    Querier q = querier();
    q.reader(TENANT, new ReadLevel(false, Map.of(3, 1042L, 5, 77L))).select(0, Long.MAX_VALUE, name("up"));
    assertThat(levels).last().isEqualTo(new ReadLevel(false, Map.of(3, 1042L, 5, 77L)));
    for (Metadata md : sg1.headers) {
      assertThat(md.get(GrpcInterceptors.READ_CONSISTENCY_OFFSETS)).isNull();
    }
  }

  @Test
  void exemplarsAreGatheredFromTheIngestersOnlyAndSelectedByMatchers() {
    TimeSeries.Builder up = series("up", "api").toBuilder();
    up.addExemplars(dev.weir.proto.prompb.Exemplar.newBuilder().setTimestamp(NOW - MIN).setValue(1)
        .addLabels(dev.weir.proto.prompb.Label.newBuilder().setName("trace_id").setValue("t1")));
    up.addExemplars(dev.weir.proto.prompb.Exemplar.newBuilder().setTimestamp(NOW - 5 * MIN).setValue(2)
        .addLabels(dev.weir.proto.prompb.Label.newBuilder().setName("trace_id").setValue("t0")));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ingester.push(TENANT, WriteRequest.newBuilder()
            .addTimeseries(up).build())).as("the older second exemplar is out of order")
        .isInstanceOfSatisfying(dev.weir.storage.errors.ClientErrorException.class,
            e -> assertThat(e.reason()).isEqualTo("exemplar_out_of_order"));
    Querier q = querier();
    List<dev.weir.storage.tsdb.head.SeriesExemplars> got = q.exemplars(TENANT, NOW - 10 * MIN, NOW, name("up"));
    assertThat(got).hasSize(1);
    assertThat(got.get(0).seriesLabels().get("job")).isEqualTo("api");
    assertThat(got.get(0).exemplars()).extracting(e -> e.labels().get("trace_id"), e -> e.timestamp())
        .containsExactly(org.assertj.core.groups.Tuple.tuple("t1", NOW - MIN));
    assertThat(q.exemplars(TENANT, NOW - 10 * MIN, NOW - 2 * MIN, name("up"))).as("outside the range").isEmpty();
    assertThat(q.exemplars(TENANT, NOW - 10 * MIN, NOW, name("requests"))).isEmpty();
    assertThat(q.exemplars("team-b", NOW - 10 * MIN, NOW, name("up"))).isEmpty();
    assertThat(sg1.requests).as("blocks carry no exemplars").isEmpty();
  }

  @Test
  void metadataIsGatheredFromTheIngestersOnly() {
    ingester.push(TENANT, WriteRequest.newBuilder().addMetadata(MetricMetadata.newBuilder()
        .setMetricFamilyName("up").setType(MetricMetadata.MetricType.GAUGE).setHelp("Up.")).build());
    Querier q = querier();
    assertThat(q.metadata(TENANT)).containsOnlyKeys("up");
    assertThat(q.metadata(TENANT).get("up").getHelp()).isEqualTo("Up.");
    assertThat(q.metadata("team-b")).isEmpty();
    assertThat(sg1.requests).as("blocks carry no metadata").isEmpty();
  }

  @Test
  void anotherTenantSeesNothingOfThisOne() {
    sg1.series.clear();
    sg2.series.clear();
    assertThat(querier().reader("team-b", false).select(0, Long.MAX_VALUE, name("up"))).isEmpty();
  }

  @Test
  void aFailingStoreGatewayFailsTheQueryNamingItWithNoPartialAnswer() {
    sg2.failWith = Status.UNAVAILABLE.withDescription("bucket unreachable");
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThatThrownBy(() -> r.select(0, Long.MAX_VALUE, name("up"))).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("store-gateway " + prefix + "sg-2").hasMessageContaining("UNAVAILABLE bucket unreachable");
    assertThatThrownBy(() -> r.labelNames(0, Long.MAX_VALUE, List.of())).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("sg-2: LabelNames failed");
  }

  @Test
  void aStoreGatewayReplicaFailingWithAServerErrorIsReplacedByTheNextAndTheAnswerIsWhole() {
    Querier q = querierOverStoreGatewayRing();
    List<FakeStoreGateway> order = replicaOrder();
    order.get(0).failWith = Status.UNAVAILABLE.withDescription("connection refused");
    assertThat(text(q.reader(TENANT, false).select(0, Long.MAX_VALUE, name("up"))).get("up{job=\"api\"}"))
        .containsExactly("5m=1.0", "4m=0.0", "3m=1.0", "2m=1.0", "1m=1.0");
    assertThat(order.get(0).requests).hasSize(1);
    assertThat(order.get(1).requests).hasSize(1);
    assertThat(registry.scrape()).contains("weir_querier_source_failovers_total{kind=\"store-gateway\"} 1.0");
    order.get(0).failWith = null;
    q.reader(TENANT, false).select(0, Long.MAX_VALUE, name("up"));
    assertThat(order.get(0).requests).as("a healthy first replica answers alone").hasSize(2);
    assertThat(order.get(1).requests).hasSize(1);
  }

  @Test
  void everyReplicaFailingFailsTheQueryNamingEachOfThem() {
    Querier q = querierOverStoreGatewayRing();
    sg1.failWith = Status.UNAVAILABLE.withDescription("down one");
    sg2.hang = true;
    QuerierConfig config = new QuerierConfig(List.of(), List.of(prefix + "ingester"), Duration.ZERO, Duration.ZERO,
        Duration.ofMillis(300), 0, Duration.ZERO, false);
    q = new Querier(config, sources, QueryLimits.UNLIMITED, new QuerierMetrics(registry), clock::get);
    ReadSource.Reader r = q.reader(TENANT, false);
    assertThatThrownBy(() -> r.select(0, Long.MAX_VALUE, name("up"))).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("the store-gateway ring: every replica failed")
        .hasMessageContaining("store-gateway sg-1 (" + prefix + "sg-1): QueryStream failed: UNAVAILABLE down one")
        .hasMessageContaining("store-gateway sg-2 (" + prefix + "sg-2): QueryStream did not answer within PT0.3S");
  }

  @Test
  void aClientErrorIsNotAskedOfAnotherReplica() {
    Querier q = querierOverStoreGatewayRing();
    List<FakeStoreGateway> order = replicaOrder();
    order.get(0).failWith = Status.INVALID_ARGUMENT.withDescription("bad matcher");
    assertThatThrownBy(() -> q.reader(TENANT, false).select(0, Long.MAX_VALUE, name("up")))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(400))
        .hasMessageContaining("bad matcher");
    assertThat(order.get(1).requests).isEmpty();
  }

  @Test
  void aSourceMissingTheDeadlineFailsTheQueryNamingItAndTheFlag() {
    sg1.hang = true;
    ReadSource.Reader r = querier(Duration.ofMillis(300), Duration.ZERO, Duration.ZERO, QueryLimits.UNLIMITED)
        .reader(TENANT, false);
    assertThatThrownBy(() -> r.select(0, Long.MAX_VALUE, name("up"))).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("store-gateway " + prefix + "sg-1: QueryStream did not answer within PT0.3S")
        .hasMessageContaining("--querier.timeout");
  }

  @Test
  void aSourcesClientErrorKeepsItsStatus() {
    sg1.failWith = Status.INVALID_ARGUMENT.withDescription("bad matcher");
    ReadSource.Reader r = querier().reader(TENANT, false);
    assertThatThrownBy(() -> r.select(0, Long.MAX_VALUE, name("up")))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(400))
        .hasMessageContaining("sg-1").hasMessageContaining("bad matcher");
  }

  @Test
  void limitsRefuseTheQueryWith422() {
    ReadSource.Reader bySeries = querier(Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, new QueryLimits(2, 0))
        .reader(TENANT, false);
    assertThatThrownBy(() -> bySeries.select(0, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+"))))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
        .hasMessageContaining("more than 2 series");
    sources.stop();
    ReadSource.Reader bySamples = querier(Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, new QueryLimits(0, 4))
        .reader(TENANT, false);
    assertThat(bySamples.select(0, Long.MAX_VALUE, name("requests"))).hasSize(1);
    assertThatThrownBy(() -> bySamples.select(0, Long.MAX_VALUE, name("up")))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
        .hasMessageContaining("more than 4 samples");
    assertThat(registry.scrape()).contains("weir_querier_refused_queries_total{reason=\"query_limit\"} 2.0");
  }

  @Test
  void theTimeWindowsDecideWhichSourcesAreAsked() {
    Querier q = querier(Duration.ofSeconds(30), Duration.ofMinutes(4), Duration.ofMinutes(3), QueryLimits.UNLIMITED);
    ReadSource.Reader r = q.reader(TENANT, false);
    // Newer than query-store-after: ingesters only.
    assertThat(text(r.select(NOW - 2 * MIN, NOW, name("up"))).get("up{job=\"api\"}")).containsExactly("2m=1.0", "1m=1.0");
    assertThat(sg1.requests).isEmpty();
    // Older than query-ingesters-within: store-gateways only (the ingester's samples there are not read).
    assertThat(text(r.select(NOW - 10 * MIN, NOW - 5 * MIN, name("up"))).keySet())
        .containsExactly("up{job=\"api\"}", "up{job=\"batch\"}");
    // Across both: each kind gets its window, the overlap is merged.
    assertThat(text(r.select(0, NOW, name("up"))).get("up{job=\"api\"}"))
        .containsExactly("5m=1.0", "4m=0.0", "3m=1.0", "2m=1.0", "1m=1.0");
    QueryRequest last = (QueryRequest) sg1.requests.get(sg1.requests.size() - 1);
    assertThat(last.getEndTimestampMs()).isEqualTo(NOW - 3 * MIN);
  }
}
