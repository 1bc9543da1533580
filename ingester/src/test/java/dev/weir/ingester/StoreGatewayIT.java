package dev.weir.ingester;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar with {@code --target=store-gateway} over a filesystem bucket: a real gRPC client
 * gets exact samples merged across blocks and the label APIs; blocks added to and deleted from the
 * bucket show after a sync; a restart reuses the index-header cache.
 */
class StoreGatewayIT {
  static final long STEP = 30_000;
  @TempDir Path dir;

  String[] args(Path bucket) {
    return new String[] {"--target=store-gateway", "--blocks-storage.filesystem.dir=" + bucket,
        "--blocks-storage.bucket-store.sync-dir=" + dir.resolve("sync"),
        "--blocks-storage.bucket-store.sync-interval=1s"};
  }

  static IngesterGrpc.IngesterBlockingStub stub(ManagedChannel channel, String tenant) {
    Metadata md = new Metadata();
    md.put(GrpcInterceptors.ORG_ID, tenant);
    return IngesterGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
        .withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  static List<TimeSeries> query(IngesterGrpc.IngesterBlockingStub stub, long start, long end, String job) {
    List<TimeSeries> out = new ArrayList<>();
    QueryRequest.Builder q = QueryRequest.newBuilder().setStartTimestampMs(start).setEndTimestampMs(end);
    if (job != null) {
      q.addMatchers(LabelMatcher.newBuilder().setType(LabelMatcher.Type.RE).setName("job").setValue(job));
    }
    stub.queryStream(q.build()).forEachRemaining(r -> out.addAll(r.getTimeseriesList()));
    return out;
  }

  static Labels labels(String job, int i) {
    return Labels.of("__name__", "http_requests_total", "instance", "host-" + i, "job", job);
  }

  @Test
  void servesExactSamplesAcrossBlocksAndFollowsTheBucket() throws Exception {
    FilesystemBucket bucket = new FilesystemBucket(dir.resolve("bucket"));
    TestBlocks.Builder first = new TestBlocks.Builder();
    TestBlocks.Builder second = new TestBlocks.Builder();
    for (int i = 0; i < 20; i++) {
      int n = i;
      first.addRange(labels("api", i), 0, 2 * HOUR, STEP, ts -> n * 1e6 + ts / STEP);
      // The second block repeats the last hour of the first (identical samples) and adds two hours.
      second.addRange(labels("api", i), HOUR, 4 * HOUR, STEP, ts -> n * 1e6 + ts / STEP);
    }
    first.add(labels("db", 0), 60_000, 7).upload(bucket, dir.resolve("scratch"), "tenant-a", 0, 2 * HOUR, 1);
    second.upload(bucket, dir.resolve("scratch"), "tenant-a", HOUR, 4 * HOUR, 2);

    try (WeirProcess sg = WeirProcess.start(dir.resolve("sg"), args(dir.resolve("bucket")))) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(sg.grpcTarget()).usePlaintext().build();
      try {
        IngesterGrpc.IngesterBlockingStub a = stub(channel, "tenant-a");
        List<TimeSeries> got = query(a, 90 * STEP, 3 * HOUR, "api");
        assertThat(got).hasSize(20);
        assertThat(got.get(0).getLabelsList()).containsExactly(label("__name__", "http_requests_total"),
            label("instance", "host-0"), label("job", "api"));
        assertThat(got).extracting(ts -> ts.getLabels(1).getValue()).isSorted();
        TimeSeries host7 = got.stream().filter(ts -> ts.getLabels(1).getValue().equals("host-7")).findFirst()
            .orElseThrow();
        long[] want = LongStream.rangeClosed(90, 3 * HOUR / STEP).map(k -> k * STEP).toArray();
        assertThat(host7.getSamplesList()).extracting(Sample::getTimestamp).containsExactly(
            LongStream.of(want).boxed().toArray(Long[]::new));
        assertThat(host7.getSamplesList()).extracting(Sample::getValue).containsExactly(
            LongStream.of(want).mapToObj(ts -> 7e6 + ts / STEP).toArray(Double[]::new));

        assertThat(a.labelNames(LabelNamesRequest.newBuilder().setEndTimestampMs(4 * HOUR).build())
            .getLabelNamesList()).containsExactly("__name__", "instance", "job");
        assertThat(a.labelValues(LabelValuesRequest.newBuilder().setLabelName("job").setEndTimestampMs(4 * HOUR)
            .build()).getLabelValuesList()).containsExactly("api", "db");
        assertThat(query(stub(channel, "tenant-b"), 0, 4 * HOUR, null)).isEmpty();
        assertThatThrownBy(() -> a.push(WriteRequest.getDefaultInstance())).isInstanceOfSatisfying(
            StatusRuntimeException.class, e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
        assertThat(sg.metric("weir_bucket_store_blocks_loaded")).isEqualTo(2);
        assertThat(sg.metric("weir_bucket_store_bucket_read_bytes_total{file=\"chunks\"}")).isPositive();

        String third = new TestBlocks.Builder().add(labels("batch", 0), 5 * HOUR, 1)
            .upload(bucket, dir.resolve("scratch"), "tenant-a", 4 * HOUR, 6 * HOUR, 3);
        await().atMost(30, TimeUnit.SECONDS).until(() -> query(a, 0, 6 * HOUR, "batch").size() == 1);
        bucket.delete("tenant-a", third);
        await().atMost(30, TimeUnit.SECONDS).until(() -> sg.metric("weir_bucket_store_blocks_loaded") == 2);
        assertThat(query(a, 0, 6 * HOUR, "batch")).isEmpty();
      } finally {
        channel.shutdownNow();
      }
      sg.terminate(java.time.Duration.ofSeconds(30));
      sg.restart();
      assertThat(sg.metric("weir_bucket_store_index_header_cache_total{outcome=\"hit\"}")).isEqualTo(2);
      assertThat(sg.metric("weir_bucket_store_bucket_read_bytes_total{file=\"index\"}")).isNaN();
    }
  }

  static Label label(String name, String value) {
    return Label.newBuilder().setName(name).setValue(value).build();
  }
}
