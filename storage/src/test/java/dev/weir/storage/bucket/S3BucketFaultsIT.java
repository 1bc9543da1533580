package dev.weir.storage.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.weir.storage.bucket.Bucket.BlockRef;
import dev.weir.storage.testing.FlakyHttpProxy;
import dev.weir.storage.testing.S3Server;
import dev.weir.storage.tsdb.block.Ulid;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The S3 bucket under real faults, against S3Proxy: an uploader killed with SIGKILL mid-upload
 * leaves an incomplete block that is never listed and that a redone upload replaces; 503s are
 * retried by the SDK and counted; a part that keeps failing aborts its multipart upload.
 */
class S3BucketFaultsIT {
  static final long PART = S3BucketConfig.MIN_PART_SIZE;
  static final AtomicInteger BUCKETS = new AtomicInteger();
  static S3Server server;
  @TempDir static Path serverDir;

  @TempDir Path tmp;
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final List<AutoCloseable> closing = new ArrayList<>();
  String bucketName;
  FlakyHttpProxy proxy;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3Server.start(serverDir);
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void setUp() throws Exception {
    bucketName = "faults-" + BUCKETS.incrementAndGet();
    server.createBucket(bucketName);
    proxy = new FlakyHttpProxy(server.port());
    closing.add(proxy);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  S3BucketConfig config(String endpoint) {
    return S3BucketConfig.of(endpoint, bucketName, S3Server.ACCESS_KEY, S3Server.SECRET_KEY, "", true,
        S3BucketConfig.LookupType.PATH, 3).withRetryDelays(Duration.ofMillis(10), Duration.ofMillis(100))
        .withMultipart(PART + 1, PART);
  }

  S3Bucket open(String endpoint) throws Exception {
    S3Bucket b = S3Bucket.open(config(endpoint), new S3BucketMetrics(registry));
    closing.add(b);
    return b;
  }

  /** A local block directory: meta.json plus files of the given sizes, random content. */
  Path localBlock(String id, Map<String, Integer> sizes) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("local").resolve(id));
    Files.writeString(dir.resolve("meta.json"), "{\"ulid\": \"" + id + "\"}");
    Random r = new Random(id.hashCode());
    for (Map.Entry<String, Integer> f : sizes.entrySet()) {
      byte[] b = new byte[f.getValue()];
      r.nextBytes(b);
      Files.createDirectories(dir.resolve(f.getKey()).getParent());
      Files.write(dir.resolve(f.getKey()), b);
    }
    return dir;
  }

  static void assertSameFiles(Bucket bucket, String tenant, String id, Path local) throws Exception {
    for (String f : S3Objects.filesOf(local).keySet()) {
      byte[] want = Files.readAllBytes(local.resolve(f));
      assertThat(bucket.size(tenant, id, f)).as(f).isEqualTo(want.length);
      assertThat(bucket.read(tenant, id, f, 0, want.length)).as(f).isEqualTo(want);
    }
  }

  double counted(String name) {
    return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  int pendingMultipartUploads() {
    try (S3Client c = server.client()) {
      return c.listMultipartUploads(b -> b.bucket(bucketName)).uploads().size();
    }
  }

  @Test
  void anUploaderKilledMidUploadLeavesAnIncompleteBlockThatARedoneUploadReplaces() throws Exception {
    String id = Ulid.random(1_700_000_000_000L);
    Path local = localBlock(id, new TreeMap<>(Map.of("chunks/000001", 1 << 20, "chunks/000002",
        (int) (3 * PART + 1), "index", 1 << 20)));
    // The proxy passes parts 1 and 2 and holds part 3: the child is stuck inside its multipart upload.
    proxy.holdWhen(line -> line.contains("partNumber=3&"));
    S3Bucket bucket = open(server.endpoint());
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(javaBin, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        S3UploadMain.class.getName(), proxy.endpoint(), bucketName, S3Server.ACCESS_KEY, S3Server.SECRET_KEY,
        "t1", id, local.toString(), String.valueOf(PART + 1), String.valueOf(PART))
        .redirectErrorStream(true).redirectOutput(tmp.resolve("child.log").toFile()).start();
    closing.add(child::destroyForcibly);

    AtomicBoolean listedEarly = new AtomicBoolean();
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
      listedEarly.compareAndSet(false, !bucket.list().isEmpty());
      return proxy.held() == 1 || !child.isAlive();
    });
    assertThat(child.isAlive()).as("the child is stuck in part 3: %s", Files.readString(tmp.resolve("child.log")))
        .isTrue();
    assertThat(proxy.forwarded()).filteredOn(l -> l.contains("partNumber=")).hasSize(2);
    child.destroyForcibly().waitFor();

    assertThat(listedEarly).as("the block was listed before its upload finished").isFalse();
    assertThat(bucket.list()).isEmpty();
    assertThat(bucket.listIncomplete()).containsExactly(new BlockRef("t1", id));
    assertThat(pendingMultipartUploads()).as("the killed multipart upload").isEqualTo(1);

    bucket.upload("t1", id, local);
    assertThat(bucket.list()).containsExactly(new BlockRef("t1", id));
    assertThat(bucket.listIncomplete()).isEmpty();
    assertThat(pendingMultipartUploads()).isZero();
    assertSameFiles(bucket, "t1", id, local);
  }

  @Test
  void serverErrorsAreRetriedAndCountedAndTheUploadSucceeds() throws Exception {
    S3Bucket bucket = open(proxy.endpoint());
    String id = Ulid.random(1_700_000_000_000L);
    Path local = localBlock(id, Map.of("index", 10_000, "chunks/000001", 50_000));

    proxy.failNext(3, line -> true);
    bucket.upload("t1", id, local);

    assertThat(proxy.failed()).isEqualTo(3);
    assertThat(counted("weir.bucket.s3.retries")).isEqualTo(3);
    assertThat(registry.find("weir.bucket.s3.requests").tag("outcome", "error").counters()).isEmpty();
    assertThat(bucket.list()).containsExactly(new BlockRef("t1", id));
    assertSameFiles(bucket, "t1", id, local);
  }

  @Test
  void aServerThatKeepsFailingFailsTheUploadRetryablyAfterTheConfiguredRetries() throws Exception {
    S3Bucket bucket = open(proxy.endpoint());
    String id = Ulid.random(1_700_000_000_000L);
    Path local = localBlock(id, Map.of("index", 10_000));

    proxy.failNext(Integer.MAX_VALUE, line -> line.startsWith("PUT "));
    assertThatThrownBy(() -> bucket.upload("t1", id, local))
        .isInstanceOf(java.io.IOException.class)
        .isNotInstanceOf(AccessDeniedException.class) // the block-builder retries the cycle
        .hasMessageContaining("t1/" + id + "/");

    assertThat(proxy.failed()).isEqualTo(4); // the first PUT: 1 attempt + 3 retries, then it gives up
    assertThat(registry.get("weir.bucket.s3.retries").tag("operation", "PutObject").counter().count()).isEqualTo(3);
    assertThat(bucket.list()).isEmpty();
  }

  @Test
  void aPartThatKeepsFailingAbortsItsMultipartUpload() throws Exception {
    S3Bucket bucket = open(proxy.endpoint());
    String id = Ulid.random(1_700_000_000_000L);
    Path local = localBlock(id, Map.of("chunks/000001", (int) (3 * PART)));

    proxy.failNext(Integer.MAX_VALUE, line -> line.contains("partNumber=2&"));
    assertThatThrownBy(() -> bucket.upload("t1", id, local)).isInstanceOf(java.io.IOException.class);

    assertThat(proxy.forwarded()).anyMatch(l -> l.startsWith("DELETE ") && l.contains("uploadId="));
    assertThat(pendingMultipartUploads()).isZero();
    assertThat(bucket.list()).isEmpty();
    assertThat(bucket.listIncomplete()).isEmpty();
  }
}
