package dev.weir.storage.blockbuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.S3Bucket;
import dev.weir.storage.bucket.S3BucketConfig;
import dev.weir.storage.bucket.S3BucketMetrics;
import dev.weir.storage.ingest.batch.BatchSink;
import dev.weir.storage.ingest.batch.SinkException;
import dev.weir.storage.testing.FlakyHttpProxy;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.testing.S3Server;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block-builder's sink on the S3 bucket (S3Proxy): the blocks it uploads, downloaded again
 * with range reads, are read by Prometheus' promtool with exactly the samples written; an upload
 * that fails makes the cycle fail retryably (so the consumer does not commit it) and its redo
 * uploads the blocks.
 */
class S3BlockBuilderIT {
  static final long HOUR = 3_600_000L;
  static S3Server server;
  @TempDir static Path serverDir;

  @TempDir Path dir;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3Server.start(serverDir);
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  static S3Bucket open(String endpoint, String bucket) throws Exception {
    S3BucketConfig c = S3BucketConfig.of(endpoint, bucket, S3Server.ACCESS_KEY, S3Server.SECRET_KEY, "", true,
        S3BucketConfig.LookupType.PATH, 2).withRetryDelays(Duration.ofMillis(10), Duration.ofMillis(50));
    return S3Bucket.open(c, new S3BucketMetrics(new SimpleMeterRegistry()));
  }

  BlockBuilderSink sink(Bucket bucket) {
    return new BlockBuilderSink(bucket, dir.resolve("staging"), 2 * HOUR, "topic", new SimpleMeterRegistry());
  }

  /** Every file of every block of a tenant, fetched with size + range reads, into {@code to/<ID>/}. */
  static void download(Bucket bucket, String tenant, Path to) throws Exception {
    for (Bucket.BlockRef r : bucket.list()) {
      if (!r.tenant().equals(tenant)) {
        continue;
      }
      Path b = to.resolve(r.id());
      Files.createDirectories(b.resolve("chunks"));
      Files.write(b.resolve("meta.json"), bucket.meta(tenant, r.id()));
      List<String> files = new ArrayList<>(List.of("index", "tombstones"));
      for (int i = 1; i < 1000; i++) {
        String chunks = String.format("chunks/%06d", i);
        try {
          bucket.size(tenant, r.id(), chunks);
          files.add(chunks);
        } catch (NoSuchFileException e) {
          break;
        }
      }
      for (String f : files) {
        int size = (int) bucket.size(tenant, r.id(), f);
        Files.write(b.resolve(f), bucket.read(tenant, r.id(), f, 0, size));
      }
    }
  }

  @Test
  void promtoolReadsTheBlocksTheSinkUploadedToS3WithExactlyTheSamplesWritten() throws Exception {
    server.createBucket("promtool");
    try (S3Bucket bucket = open(server.endpoint(), "promtool")) {
      BatchSink.Batch b = sink(bucket).begin(0, 0, 3 * HOUR);
      Map<String, List<String>> written = new TreeMap<>();
      long offset = 0;
      for (int i = 0; i < 480; i++) { // 2 h of 15 s samples for 3 series, across the block boundary at 4 h
        for (String name : List.of("up", "load", "requests_total")) {
          long ts = 3 * HOUR + i * 15_000L;
          b.add("t1", BlockBuilderSinkTest.req(name, ts, i % 97), offset++, 3 * HOUR);
          written.computeIfAbsent(Promtool.key(Labels.of("__name__", name, "job", "j")), k -> new ArrayList<>())
              .add((i % 97) + " " + ts);
        }
      }
      b.flush(offset);
      b.close();

      assertThat(bucket.list()).hasSize(2); // [2h, 4h) and [4h, 6h)
      download(bucket, "t1", dir.resolve("download"));
      assertThat(Promtool.dump(dir.resolve("download"), dir.resolve("prom"))).isEqualTo(written);
      assertThat(Promtool.run(dir, Promtool.PROMTOOL, "tsdb", "analyze", dir.resolve("prom").toString()))
          .contains("Series: 3");
    }
  }

  @Test
  void aFailedUploadFailsTheCycleRetryablyAndTheRedoneCycleUploadsItsBlocks() throws Exception {
    server.createBucket("failing");
    try (FlakyHttpProxy proxy = new FlakyHttpProxy(server.port());
        S3Bucket bucket = open(proxy.endpoint(), "failing")) {
      proxy.failNext(Integer.MAX_VALUE, line -> line.startsWith("PUT "));
      BatchSink.Batch first = sink(bucket).begin(0, 0, HOUR);
      first.add("t1", BlockBuilderSinkTest.req("m", HOUR, 1), 0, HOUR);
      assertThatThrownBy(() -> first.flush(1)).isInstanceOfSatisfying(SinkException.class,
          e -> assertThat(e.retryable()).as("retryable: the consumer redoes the cycle, commits nothing").isTrue());
      first.close();
      assertThat(bucket.list()).isEmpty();

      proxy.failNext(0, line -> true);
      BatchSink.Batch redo = sink(bucket).begin(0, 0, HOUR);
      redo.add("t1", BlockBuilderSinkTest.req("m", HOUR, 1), 0, HOUR);
      redo.flush(1);
      redo.close();
      assertThat(bucket.list()).hasSize(1);
      assertThat(bucket.listIncomplete()).isEmpty();
    }
  }
}
