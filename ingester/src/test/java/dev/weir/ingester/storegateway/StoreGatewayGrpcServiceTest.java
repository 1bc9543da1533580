package dev.weir.ingester.storegateway;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.RequestMetrics;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.QueryStreamResponse;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.bucketstore.BucketStore;
import dev.weir.storage.bucketstore.BucketStoreConfig;
import dev.weir.storage.bucketstore.BucketStoreMetrics;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
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
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store-gateway's gRPC service through an in-process server and a real stub. */
class StoreGatewayGrpcServiceTest {
  @TempDir Path dir;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private Server server;
  private ManagedChannel channel;
  private FilesystemBucket bucket;
  private BucketStore store;

  @BeforeEach
  void setUp() throws Exception {
    bucket = new FilesystemBucket(dir.resolve("bucket"));
    Labels up = Labels.of("__name__", "up", "job", "api");
    new TestBlocks.Builder().addRange(up, 0, 60_000, 15_000, ts -> 1)
        .add(Labels.of("__name__", "up", "job", "db"), 30_000, 0)
        .upload(bucket, dir.resolve("scratch"), "team-a", 0, HOUR, 1);
    new TestBlocks.Builder().addRange(up, 45_000, 120_000, 15_000, ts -> 1) // 45 s repeats an identical sample
        .upload(bucket, dir.resolve("scratch"), "team-a", 0, HOUR, 2);
    new TestBlocks.Builder().add(Labels.of("__name__", "secret"), 1_000, 42)
        .upload(bucket, dir.resolve("scratch"), "team-b", 0, HOUR, 3);
    store = new BucketStore(new BucketStoreConfig(Duration.ofMinutes(15), dir.resolve("sync"), 2048),
        bucket, new BucketStoreMetrics(registry), System::currentTimeMillis);
    store.sync();
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(GrpcServer.definition(new StoreGatewayGrpcService(() -> store),
            List.of(GrpcInterceptors.tenant(new Tenants(true, "anonymous")),
                GrpcInterceptors.metrics(new RequestMetrics(registry)))))
        .build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void tearDown() {
    channel.shutdownNow();
    server.shutdownNow();
  }

  private IngesterGrpc.IngesterBlockingStub stub(String tenant) {
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, tenant);
    return IngesterGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static LabelMatcher matcher(LabelMatcher.Type type, String name, String value) {
    return LabelMatcher.newBuilder().setType(type).setName(name).setValue(value).build();
  }

  static List<TimeSeries> query(IngesterGrpc.IngesterBlockingStub stub, long start, long end, LabelMatcher... ms) {
    List<TimeSeries> out = new ArrayList<>();
    stub.queryStream(QueryRequest.newBuilder().setStartTimestampMs(start).setEndTimestampMs(end)
        .addAllMatchers(List.of(ms)).build()).forEachRemaining((QueryStreamResponse r) -> out.addAll(r.getTimeseriesList()));
    return out;
  }

  @Test
  void queryStreamMergesBlocksWithInclusiveBoundsPerTenant() {
    List<TimeSeries> got = query(stub("team-a"), 15_000, 105_000, matcher(LabelMatcher.Type.EQ, "__name__", "up"));
    assertThat(got).extracting(ts -> ts.getLabels(1).getValue()).containsExactly("api", "db");
    assertThat(got.get(0).getSamplesList()).extracting(Sample::getTimestamp)
        .containsExactly(15_000L, 30_000L, 45_000L, 60_000L, 75_000L, 90_000L, 105_000L);
    assertThat(got.get(0).getSamplesList()).extracting(Sample::getValue).containsOnly(1.0);
    assertThat(got.get(1).getSamplesList()).containsExactly(Sample.newBuilder().setTimestamp(30_000).setValue(0).build());
    assertThat(query(stub("team-a"), 0, HOUR, matcher(LabelMatcher.Type.NRE, "job", "api|db"))).isEmpty();
    assertThat(query(stub("team-b"), 0, HOUR)).extracting(ts -> ts.getLabels(0).getValue()).containsExactly("secret");
  }

  @Test
  void labelNamesAndValues() {
    assertThat(stub("team-a").labelNames(LabelNamesRequest.newBuilder().setStartTimestampMs(0)
        .setEndTimestampMs(HOUR).build()).getLabelNamesList()).containsExactly("__name__", "job");
    assertThat(stub("team-a").labelValues(LabelValuesRequest.newBuilder().setLabelName("job").setStartTimestampMs(0)
        .setEndTimestampMs(HOUR).addMatchers(matcher(LabelMatcher.Type.NEQ, "job", "db")).build())
        .getLabelValuesList()).containsExactly("api");
    assertThat(stub("team-a").labelNames(LabelNamesRequest.newBuilder().setStartTimestampMs(2 * HOUR)
        .setEndTimestampMs(3 * HOUR).build()).getLabelNamesList()).isEmpty();
  }

  @Test
  void pushIsUnimplemented() {
    assertThatThrownBy(() -> stub("team-a").push(WriteRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
  }

  @Test
  void aQueryOverTheChunkLimitIsResourceExhaustedAndABadRegexInvalid() throws Exception {
    TestBlocks.Builder big = new TestBlocks.Builder();
    java.util.Random random = new java.util.Random(1);
    for (int s = 0; s < 50; s++) {
      big.addRange(Labels.of("__name__", "big", "i", "" + s), 0, HOUR, 10_000, ts -> random.nextDouble());
    }
    big.upload(bucket, dir.resolve("scratch"), "team-c", 0, HOUR, 4);
    store.sync();
    assertThatThrownBy(() -> query(stub("team-c"), 0, HOUR))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
          assertThat(e.getStatus().getDescription()).contains("max-chunk-bytes-per-query");
        });
    assertThat(query(stub("team-c"), 0, 600_000, matcher(LabelMatcher.Type.EQ, "i", "7"))).hasSize(1);
    assertThatThrownBy(() -> query(stub("team-a"), 0, HOUR, matcher(LabelMatcher.Type.RE, "job", "(")))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }
}
