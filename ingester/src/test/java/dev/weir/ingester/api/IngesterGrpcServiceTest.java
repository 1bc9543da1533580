package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterConfig;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.RequestMetrics;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.UserLagResponse;
import dev.weir.proto.ingester.UserLagRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.testing.FaultyChannel;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IngesterGrpcServiceTest {
  static final long NOW = 1_700_000_000_000L;
  /** Per-request limits small enough to cross in a test: 400 series, 1000 samples. */
  static final ApiLimits LIMITS = new ApiLimits(64 << 20, 400, 1000, 0, 0);

  @TempDir Path dir;
  private final AtomicLong clock = new AtomicLong(NOW);
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private Server server;
  private ManagedChannel channel;
  private Ingester ingester;
  private final FaultyChannel.Faults faults = new FaultyChannel.Faults();

  @BeforeEach
  void setUp() throws Exception {
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir).withChannelOpener(faults::open), new TsdbMetrics(registry),
        clock::get, t -> () -> 0);
    ingester = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb,
        t -> new Limits(30, 1024, 2048, Duration.ofMinutes(10), 0),
        new IngesterMetrics(registry, clock::get, 1_200_000), clock::get);
    ingester.start();
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(GrpcServer.definition(new IngesterGrpcService(ingester, ingester,
                dev.weir.ingester.ingest.ReadConsistency.IMMEDIATE, LIMITS, "ingester-0"),
            List.of(GrpcInterceptors.tenant(new Tenants(true, "anonymous")),
                GrpcInterceptors.metrics(new RequestMetrics(registry)))))
        .build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void tearDown() {
    channel.shutdownNow();
    server.shutdownNow();
    ingester.stop();
  }

  private IngesterGrpc.IngesterBlockingStub stub(String tenant) {
    Metadata md = new Metadata();
    if (tenant != null) {
      md.put(GrpcInterceptors.ORG_ID, tenant);
    }
    return IngesterGrpc.newBlockingStub(channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static TimeSeries series(List<String> labels, long... tsAndValues) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    for (int i = 0; i < labels.size(); i += 2) {
      b.addLabels(Label.newBuilder().setName(labels.get(i)).setValue(labels.get(i + 1)));
    }
    for (int i = 0; i < tsAndValues.length; i += 2) {
      b.addSamples(Sample.newBuilder().setTimestamp(tsAndValues[i]).setValue(tsAndValues[i + 1]));
    }
    return b.build();
  }

  static WriteRequest write(TimeSeries... ts) {
    return WriteRequest.newBuilder().addAllTimeseries(List.of(ts)).build();
  }

  private List<TimeSeries> query(String tenant, LabelMatcher... ms) {
    Iterator<QueryStreamResponse> it = stub(tenant).queryStream(QueryRequest.newBuilder()
        .setStartTimestampMs(0).setEndTimestampMs(Long.MAX_VALUE).addAllMatchers(List.of(ms)).build());
    List<TimeSeries> out = new ArrayList<>();
    it.forEachRemaining(r -> out.addAll(r.getTimeseriesList()));
    return out;
  }

  static LabelMatcher eq(String name, String value) {
    return LabelMatcher.newBuilder().setType(LabelMatcher.Type.EQ).setName(name).setValue(value).build();
  }

  private double scrapeValue(String metricAndLabels) {
    for (String line : registry.scrape().split("\n")) {
      if (line.startsWith(metricAndLabels + " ")) {
        return Double.parseDouble(line.substring(metricAndLabels.length() + 1));
      }
    }
    return 0;
  }

  @Test
  void aMalformedReadConsistencyHeaderIsInvalidArgumentNamingIt() {
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.READ_CONSISTENCY_OFFSETS, "0:-5");
    IngesterGrpc.IngesterBlockingStub bad = stub("team-a").withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    assertThatThrownBy(() -> bad.labelNames(LabelNamesRequest.getDefaultInstance()))
        .isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("X-Read-Consistency-Offsets").hasMessageContaining("must not be negative");
  }

  @Test
  void userLagAnswersTheTenantsSeriesAndNewestSample() {
    stub("team-a").push(write(series(List.of("__name__", "up"), NOW - 2_000, 1),
        series(List.of("__name__", "down"), NOW - 1_000, 1)));
    UserLagResponse r = stub("team-a").userLag(UserLagRequest.getDefaultInstance());
    assertThat(r.getSeries()).isEqualTo(2);
    assertThat(r.getNewestSampleMs()).isEqualTo(NOW - 1_000);
    assertThat(r.getInstanceId()).isEqualTo("ingester-0");
    assertThat(r.getPartitionsList()).as("classic mode: no partition").isEmpty();
    assertThat(stub("team-b").userLag(UserLagRequest.getDefaultInstance()).getSeries()).isZero();
  }

  @Test
  void pushThenQueryStreamReturnsExactlyThePushedSamples() {
    List<TimeSeries> written = new ArrayList<>();
    for (int s = 0; s < 300; s++) {
      written.add(series(List.of("__name__", "m", "i", String.format("%03d", s)),
          NOW - 3000, s, NOW - 2000, s + 1, NOW - 1000, s + 2));
    }
    stub("a").push(WriteRequest.newBuilder().addAllTimeseries(written).build());
    List<TimeSeries> read = query("a", eq("__name__", "m"));
    assertThat(read).containsExactlyElementsOf(written); // sorted by labels, samples in order
    assertThat(scrapeValue("weir_ingester_ingested_samples_total{user=\"a\"}")).isEqualTo(900);
    assertThat(scrapeValue("weir_ingester_memory_series{user=\"a\"}")).isEqualTo(300);
  }

  @Test
  void tenantsAreIsolated() {
    stub("a").push(write(series(List.of("__name__", "only_a"), NOW, 1)));
    stub("b").push(write(series(List.of("__name__", "only_b"), NOW, 2)));
    assertThat(query("a", eq("__name__", "only_b"))).isEmpty();
    assertThat(query("b", eq("__name__", "only_b"))).hasSize(1);
    assertThat(stub("b").labelValues(LabelValuesRequest.newBuilder().setLabelName("__name__")
        .setStartTimestampMs(0).setEndTimestampMs(Long.MAX_VALUE).build()).getLabelValuesList())
        .containsExactly("only_b");
    assertThat(stub("a").labelNames(LabelNamesRequest.newBuilder()
        .setStartTimestampMs(0).setEndTimestampMs(Long.MAX_VALUE).build()).getLabelNamesList())
        .containsExactly("__name__");
  }

  @Test
  void missingTenantIsUnauthenticated() {
    assertThatThrownBy(() -> stub(null).push(write(series(List.of("__name__", "x"), NOW, 1))))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED))
        .hasMessageContaining("no org id");
    assertThatThrownBy(() -> stub("bad/tenant").push(write()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("invalid tenant ID");
  }

  private void assertPushRejected(WriteRequest req, String reason, String messagePart) {
    double before = scrapeValue("weir_discarded_samples_total{reason=\"" + reason + "\",user=\"t\"}");
    assertThatThrownBy(() -> stub("t").push(req))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining(messagePart);
    assertThat(scrapeValue("weir_discarded_samples_total{reason=\"" + reason + "\",user=\"t\"}"))
        .as("discarded samples with reason %s", reason).isGreaterThan(before);
  }

  @Test
  void everyClientErrorHasItsStatusMessageAndReasonMetric() {
    stub("t").push(write(series(List.of("__name__", "s"), NOW, 5)));
    assertPushRejected(write(series(List.of("job", "x"), NOW, 1)), "missing_metric_name", "without a metric name");
    assertPushRejected(write(series(List.of("__name__", "s", "b-ad", "1"), NOW, 1)), "label_invalid",
        "invalid label name: 'b-ad'");
    assertPushRejected(write(series(List.of("__name__", "s", "a", ""), NOW, 1)), "label_value_invalid",
        "empty value");
    assertPushRejected(write(series(List.of("__name__", "s", "a", "1", "a", "2"), NOW, 1)),
        "duplicate_label_names", "duplicate label name");
    List<String> many = new ArrayList<>(List.of("__name__", "s"));
    for (int i = 0; i < 30; i++) {
      many.add("l" + i);
      many.add("v");
    }
    assertPushRejected(write(series(many, NOW, 1)), "max_label_names_per_series", "limit: 30");
    assertPushRejected(write(series(List.of("__name__", "s", "x".repeat(1025), "1"), NOW, 1)),
        "label_name_too_long", "limit: 1024");
    assertPushRejected(write(series(List.of("__name__", "s", "a", "v".repeat(2049)), NOW, 1)),
        "label_value_too_long", "limit: 2048");
    assertPushRejected(write(series(List.of("__name__", "s"), NOW - 1, 1)), "sample_out_of_order",
        "older than the newest sample of its series (timestamp=" + (NOW - 1));
    assertPushRejected(write(series(List.of("__name__", "s"), NOW, 6)), "sample_duplicate_timestamp",
        "for series s{}");
    assertPushRejected(write(series(List.of("__name__", "s"), NOW + Duration.ofHours(1).toMillis(), 1)),
        "sample_too_far_in_future", "too far in the future");
    assertPushRejected(write(TimeSeries.newBuilder().addAllLabels(series(List.of("__name__", "h")).getLabelsList())
        .addHistograms(Histogram.newBuilder().setTimestamp(NOW).setCountInt(1).setSchema(53)).build()),
        "invalid_native_histogram_schema", "native histogram has schema 53");
    // The identical sample is accepted silently and stored once.
    stub("t").push(write(series(List.of("__name__", "s"), NOW, 5)));
    assertThat(query("t", eq("__name__", "s")).get(0).getSamplesCount()).isEqualTo(1);
    assertThat(scrapeValue("weir_request_duration_seconds_count{method=\"gRPC\",route=\"/weir.Ingester/Push\","
        + "status_code=\"INVALID_ARGUMENT\"}")).isGreaterThanOrEqualTo(10);
  }

  @Test
  void pushedHistogramsComeBackFromQueryStream() {
    Histogram ints = Histogram.newBuilder().setTimestamp(NOW - 1_000).setCountInt(5).setSum(7.5).setSchema(2)
        .setZeroThreshold(0.001).setZeroCountInt(1).addPositiveSpans(dev.weir.proto.prompb.BucketSpan.newBuilder()
            .setOffset(-1).setLength(2)).addPositiveDeltas(3).addPositiveDeltas(-2)
        .setResetHint(Histogram.ResetHint.UNKNOWN).build();
    Histogram floats = Histogram.newBuilder().setTimestamp(NOW).setCountFloat(2.5).setSum(1).setSchema(0)
        .addPositiveSpans(dev.weir.proto.prompb.BucketSpan.newBuilder().setOffset(1).setLength(1))
        .addPositiveCounts(2.5).build();
    stub("h").push(write(TimeSeries.newBuilder().addAllLabels(series(List.of("__name__", "hist")).getLabelsList())
        .addHistograms(ints).addHistograms(floats).addSamples(Sample.newBuilder().setTimestamp(NOW - 2_000)
            .setValue(3)).build()));
    List<TimeSeries> got = query("h", eq("__name__", "hist"));
    assertThat(got).singleElement().satisfies(ts -> {
      assertThat(ts.getSamplesCount()).isEqualTo(1);
      // A chunk does not keep the first sample's hint: UNKNOWN stays UNKNOWN here.
      assertThat(ts.getHistogramsList()).containsExactly(ints, floats.toBuilder()
          .setResetHint(Histogram.ResetHint.UNKNOWN).setZeroCountFloat(0).build()); // the oneof is always set
    });
  }

  @Test
  void validPartOfAMixedRequestIsStored() {
    WriteRequest mixed = write(
        series(List.of("__name__", "good", "i", "1"), NOW, 1),
        series(List.of("__name__", "bad", "a", ""), NOW, 1),
        series(List.of("i", "2", "__name__", "good"), NOW, 2), // unsorted: sorted, stored
        series(List.of("__name__", "good", "i", "3"), NOW, 3, NOW - 5, 4)); // second sample OOO
    assertThatThrownBy(() -> stub("m").push(mixed))
        .hasMessageContaining("empty value for label 'a'")
        .hasMessageContaining("(and 1 more errors in this request)");
    List<TimeSeries> good = query("m", eq("__name__", "good"));
    assertThat(good).hasSize(3);
    assertThat(good).allSatisfy(ts -> assertThat(ts.getSamplesCount()).isEqualTo(1));
    assertThat(query("m", eq("__name__", "bad"))).isEmpty();
  }

  @Test
  void fullDiskIsUnavailableStoresNothingAndRecoversWhenSpaceReturns() {
    stub("d").push(write(series(List.of("__name__", "disk"), NOW - 2000, 1)));
    faults.diskFull.set(true);
    assertThatThrownBy(() -> stub("d").push(write(series(List.of("__name__", "disk"), NOW - 1000, 2),
            series(List.of("__name__", "other"), NOW - 1000, 2))))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE))
        .hasMessageContaining("No space left on device");
    assertThat(query("d", eq("__name__", "disk")).get(0).getSamplesCount()).isEqualTo(1);
    assertThat(query("d", eq("__name__", "other"))).isEmpty();
    faults.diskFull.set(false);
    stub("d").push(write(series(List.of("__name__", "disk"), NOW - 1000, 2)));
    assertThat(query("d", eq("__name__", "disk")).get(0).getSamplesCount()).isEqualTo(2);
    assertThat(scrapeValue("weir_tsdb_wal_writes_failed_total")).isEqualTo(1);
  }

  @Test
  void seriesLimitIsAClientError() throws Exception {
    // The tenant limit here is 0 (off); the storage-level test covers the limit itself. This pins
    // that the ingester maps it: a limited Tsdb rejects with per_user_series_limit, valid rest kept.
    ingester.stop();
    Tsdb limited = new Tsdb(TsdbConfig.defaults(dir.resolve("limited")), new TsdbMetrics(registry), clock::get,
        t -> () -> 1);
    Ingester small = new Ingester(new IngesterConfig("ingester-0", dir.resolve("limited"), Duration.ofMinutes(20)),
        limited, t -> Limits.DEFAULT, new IngesterMetrics(registry, clock::get, 1_200_000), clock::get);
    small.start();
    try {
      assertThatThrownBy(() -> small.push("l", write(series(List.of("__name__", "one"), NOW, 1),
              series(List.of("__name__", "two"), NOW, 1))))
          .hasMessageContaining("per-user series limit of 1");
      assertThat(scrapeValue("weir_discarded_samples_total{reason=\"per_user_series_limit\",user=\"l\"}"))
          .isEqualTo(1);
      assertThat(small.select("l", 0, Long.MAX_VALUE, List.of())).hasSize(1);
    } finally {
      small.stop();
      ingester.start();
    }
  }

  @Test
  void invalidRegexMatcherIsInvalidArgument() {
    LabelMatcher bad = LabelMatcher.newBuilder().setType(LabelMatcher.Type.RE).setName("a").setValue("(").build();
    assertThatThrownBy(() -> query("a", bad))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("invalid regular expression");
  }

  @Test
  void queryStreamRespectsTheTimeRangeAndBatchesSeries() {
    List<TimeSeries> written = new ArrayList<>();
    for (int s = 0; s < 300; s++) {
      written.add(series(List.of("__name__", "r", "i", String.valueOf(s)), 1000, 1, 2000, 2, 3000, 3));
    }
    stub("r").push(WriteRequest.newBuilder().addAllTimeseries(written).build());
    Iterator<QueryStreamResponse> it = stub("r").queryStream(QueryRequest.newBuilder()
        .setStartTimestampMs(1500).setEndTimestampMs(2000).addMatchers(eq("__name__", "r")).build());
    List<QueryStreamResponse> messages = new ArrayList<>();
    it.forEachRemaining(messages::add);
    assertThat(messages).hasSize(3); // 128 + 128 + 44
    assertThat(messages).flatExtracting(QueryStreamResponse::getTimeseriesList)
        .allSatisfy(ts -> assertThat(ts.getSamplesList())
            .containsExactly(Sample.newBuilder().setTimestamp(2000).setValue(2).build()));
  }

  /** Sends {@code body} as the Push request without encoding anything, as a broken client would. */
  private Status pushRaw(String tenant, byte[] body) {
    MethodDescriptor.Marshaller<byte[]> bytes = new MethodDescriptor.Marshaller<>() {
      @Override
      public java.io.InputStream stream(byte[] value) {
        return new java.io.ByteArrayInputStream(value);
      }

      @Override
      public byte[] parse(java.io.InputStream stream) {
        try {
          return stream.readAllBytes();
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    };
    MethodDescriptor<byte[], byte[]> push = MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(IngesterGrpc.getPushMethod().getFullMethodName())
        .setRequestMarshaller(bytes).setResponseMarshaller(bytes).build();
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, tenant);
    try {
      ClientCalls.blockingUnaryCall(
          io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md)), push,
          CallOptions.DEFAULT, body);
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  @Test
  void undecodablePushBodyIsInvalidArgumentWithTheReasonNotUnknown() {
    // Field 1 (timeseries), length 127, but one byte follows: a truncated message.
    byte[] truncated = {0x0a, 0x7f, 0x01};
    // Field 1 with wire type 7, which does not exist.
    byte[] badWireType = {0x0f, 0x00};
    for (byte[] body : List.of(truncated, badWireType)) {
      Status s = pushRaw("raw", body);
      assertThat(s.getCode()).as("%s", s).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).contains("cannot decode the weir.Ingester/Push request");
    }
    assertThat(scrapeValue("weir_request_duration_seconds_count{method=\"gRPC\",route=\"/weir.Ingester/Push\","
        + "status_code=\"INVALID_ARGUMENT\"}")).isEqualTo(2);
    // The server still decodes the next good request.
    assertThat(pushRaw("raw", write(series(List.of("__name__", "after"), NOW, 1)).toByteArray()).getCode())
        .isEqualTo(Status.Code.OK);
    assertThat(query("raw", eq("__name__", "after"))).hasSize(1);
  }

  @Test
  void pushOverThePerRequestSeriesOrSampleLimitIsInvalidArgumentAndStoresNothing() {
    List<TimeSeries> tooManySeries = new ArrayList<>();
    for (int s = 0; s <= LIMITS.maxSeriesPerRequest(); s++) {
      tooManySeries.add(series(List.of("__name__", "big", "i", String.valueOf(s)), NOW, 1));
    }
    assertThatThrownBy(() -> stub("big").push(WriteRequest.newBuilder().addAllTimeseries(tooManySeries).build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("401 series")
        .hasMessageContaining("--distributor.max-series-per-request");
    long[] manySamples = new long[2 * (LIMITS.maxSamplesPerRequest() / 2 + 1)];
    for (int i = 0; i < manySamples.length; i += 2) {
      manySamples[i] = NOW - manySamples.length + i;
    }
    assertThatThrownBy(() -> stub("big").push(write(series(List.of("__name__", "big", "i", "a"), manySamples),
            series(List.of("__name__", "big", "i", "b"), manySamples))))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining("1002 samples")
        .hasMessageContaining("--distributor.max-samples-per-request");
    assertThat(query("big", eq("__name__", "big"))).isEmpty();
  }

  @Test
  void hostileTenantIdsAreInvalidArgumentCountedAndCreateNoDirectory() throws Exception {
    java.util.Set<Path> dirsBefore;
    try (java.util.stream.Stream<Path> s = java.nio.file.Files.walk(dir)) {
      dirsBefore = s.filter(java.nio.file.Files::isDirectory).collect(java.util.stream.Collectors.toSet());
    }
    List<String> hostile = List.of("..", "a/b", "/abs/path", "nul\0byte", "x".repeat(201));
    for (String tenant : hostile) {
      assertThatThrownBy(() -> stub(tenant).push(write(series(List.of("__name__", "h"), NOW, 1))))
          .as(tenant)
          .isInstanceOfSatisfying(StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
          .hasMessageContaining("invalid tenant ID");
    }
    assertThat(scrapeValue("weir_request_duration_seconds_count{method=\"gRPC\",route=\"/weir.Ingester/Push\","
        + "status_code=\"INVALID_ARGUMENT\"}")).isEqualTo(hostile.size());
    try (java.util.stream.Stream<Path> s = java.nio.file.Files.walk(dir)) {
      assertThat(s.filter(java.nio.file.Files::isDirectory).collect(java.util.stream.Collectors.toSet()))
          .isEqualTo(dirsBefore);
    }
    assertThat(Path.of("/abs/path")).doesNotExist();
  }
}
