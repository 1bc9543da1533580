package dev.weir.ingester;

import static dev.weir.storage.testing.TestBlocks.HOUR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.DeletionMark;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.testing.TestBlocks;
import dev.weir.storage.tsdb.labels.Labels;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar with {@code --target=compactor} and a store-gateway on one filesystem bucket: a
 * block past retention is marked, the store-gateway stops serving it while its files are still in
 * the bucket, and a compactor whose deletion delay has passed deletes it; a recent block stays, and
 * so does an old block of a tenant whose runtime override keeps blocks forever.
 */
class CompactorIT {
  @TempDir Path dir;

  String[] compactor(Path bucket, String delay) throws Exception {
    Path runtime = java.nio.file.Files.writeString(dir.resolve("runtime.yaml"),
        "overrides:\n  forever:\n    compactor_blocks_retention_period: 0s\n");
    return new String[] {"--target=compactor", "--blocks-storage.filesystem.dir=" + bucket,
        "--compactor.blocks-retention-period=24h", "--compactor.deletion-delay=" + delay,
        "--compactor.cleanup-interval=1s", "--runtime-config.file=" + runtime};
  }

  @Test
  void marksBlocksPastRetentionThenTheStoreGatewayDropsThemAndTheCompactorDeletesThem() throws Exception {
    Path root = dir.resolve("bucket");
    FilesystemBucket bucket = new FilesystemBucket(root);
    long now = System.currentTimeMillis();
    long oldStart = now - 72 * HOUR - now % (2 * HOUR);
    long recentStart = now - 4 * HOUR - now % (2 * HOUR);
    Labels up = Labels.of("__name__", "up", "job", "a");
    String old = new TestBlocks.Builder().addRange(up, oldStart, oldStart + 2 * HOUR, 60_000, ts -> 1)
        .upload(bucket, dir.resolve("scratch"), "t", oldStart, oldStart + 2 * HOUR, 1);
    String recent = new TestBlocks.Builder().addRange(up, recentStart, recentStart + 2 * HOUR, 60_000, ts -> 2)
        .upload(bucket, dir.resolve("scratch"), "t", recentStart, recentStart + 2 * HOUR, 2);
    String kept = new TestBlocks.Builder().addRange(up, oldStart, oldStart + 2 * HOUR, 60_000, ts -> 3)
        .upload(bucket, dir.resolve("scratch"), "forever", oldStart, oldStart + 2 * HOUR, 3);

    try (WeirProcess sg = WeirProcess.start(dir.resolve("sg"), "--target=store-gateway",
        "--blocks-storage.filesystem.dir=" + root, "--blocks-storage.bucket-store.sync-dir=" + dir.resolve("sync"),
        "--blocks-storage.bucket-store.sync-interval=1s")) {
      assertThat(sg.metric("weir_bucket_store_blocks_loaded")).isEqualTo(3);
      ManagedChannel channel = NettyChannelBuilder.forTarget(sg.grpcTarget()).usePlaintext().build();
      try {
        IngesterGrpc.IngesterBlockingStub stub = StoreGatewayIT.stub(channel, "t");
        assertThat(StoreGatewayIT.query(stub, oldStart, now, null)).hasSize(1)
            .allSatisfy(s -> assertThat(s.getSamplesCount()).isEqualTo(240));

        try (WeirProcess c = WeirProcess.start(dir.resolve("c1"), compactor(root, "12h"))) {
          await().atMost(30, TimeUnit.SECONDS).until(() -> DeletionMark.read(bucket, "t", old) != null);
          assertThat(c.metric("weir_compactor_blocks_marked_for_deletion_total{reason=\"retention\"}")).isEqualTo(1);
          await().atMost(30, TimeUnit.SECONDS).until(() -> sg.metric("weir_bucket_store_blocks_loaded") == 2);
          assertThat(bucket.list()).as("marked, not deleted within the delay").extracting(Bucket.BlockRef::id)
              .containsExactlyInAnyOrder(old, recent, kept);
          assertThat(DeletionMark.read(bucket, "forever", kept)).as("the tenant's override keeps it").isNull();
          assertThat(StoreGatewayIT.query(stub, oldStart, now, null)).as("only the recent block is served")
              .hasSize(1).allSatisfy(s -> assertThat(s.getSamplesCount()).isEqualTo(120));
          assertThat(c.metric("weir_compactor_blocks_cleaned_total")).isZero();
        }
        try (WeirProcess c = WeirProcess.start(dir.resolve("c2"), compactor(root, "0s"))) {
          await().atMost(30, TimeUnit.SECONDS).until(() -> bucket.list().size() == 2);
          assertThat(bucket.list()).extracting(Bucket.BlockRef::id).containsExactlyInAnyOrder(recent, kept);
          assertThat(root.resolve("t").resolve(old)).doesNotExist();
          assertThat(c.metric("weir_compactor_blocks_cleaned_total")).isEqualTo(1);
          assertThat(c.metric("weir_compactor_block_cleanup_failures_total")).isZero();
        }
        assertThat(sg.metric("weir_bucket_store_block_load_failures_total")).isZero();
      } finally {
        channel.shutdownNow();
        sg.terminate(Duration.ofSeconds(30));
      }
    }
  }
}
