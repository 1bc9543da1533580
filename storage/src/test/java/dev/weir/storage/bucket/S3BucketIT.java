package dev.weir.storage.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.Bucket.BlockRef;
import dev.weir.storage.testing.S3Server;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The bucket contract on a real S3 server (S3Proxy in its own JVM), plus what only S3 has: large
 * files go up in parts and read back byte-exact, and a wrong key or a missing bucket fails at open
 * with the bucket and endpoint named.
 */
class S3BucketIT extends BucketContract {
  static final AtomicInteger BUCKETS = new AtomicInteger();
  static S3Server server;
  @TempDir static Path serverDir;

  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  String bucketName;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3Server.start(serverDir);
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @AfterEach
  void closeBucket() {
    ((S3Bucket) bucket).close();
  }

  S3BucketConfig config(String name) {
    return S3BucketConfig.of(server.endpoint(), name, S3Server.ACCESS_KEY, S3Server.SECRET_KEY, "", true,
        S3BucketConfig.LookupType.AUTO, 3);
  }

  @Override
  Bucket newBucket() throws Exception {
    bucketName = "weir-" + BUCKETS.incrementAndGet();
    server.createBucket(bucketName);
    return S3Bucket.open(config(bucketName), new S3BucketMetrics(registry));
  }

  @Override
  void leaveUnfinishedUpload(String tenant, String id) {
    try (S3Client c = server.client()) {
      for (String f : new String[] {"index", "chunks/000099"}) {
        c.putObject(b -> b.bucket(bucketName).key(tenant + "/" + id + "/" + f), RequestBody.fromBytes(new byte[10]));
      }
    }
  }

  @Test
  void aFileAboveTheThresholdGoesUpInPartsAndReadsBackByteExact() throws Exception {
    S3BucketMetrics metrics = new S3BucketMetrics(registry);
    long part = S3BucketConfig.MIN_PART_SIZE;
    try (S3Bucket multipart = S3Bucket.open(config(bucketName).withMultipart(part + 1, part), metrics)) {
      byte[] big = new byte[(int) (2 * part + 12345)];
      new Random(20).nextBytes(big);
      Map<String, byte[]> f = files(ID_1, 20, "index");
      f.put("chunks/000001", big);
      multipart.upload("t1", ID_1, localBlock(ID_1, f));

      assertThat(registry.get("weir.bucket.s3.requests").tags("operation", "UploadPart", "outcome", "success")
          .counter().count()).isEqualTo(3);
      assertThat(registry.get("weir.bucket.s3.requests").tags("operation", "CompleteMultipartUpload").counter()
          .count()).isEqualTo(1);
      assertThat(multipart.size("t1", ID_1, "chunks/000001")).isEqualTo(big.length);
      assertThat(multipart.read("t1", ID_1, "chunks/000001", 0, big.length)).isEqualTo(big);
      // A range across the first part boundary.
      int from = (int) part - 100;
      assertThat(multipart.read("t1", ID_1, "chunks/000001", from, 200))
          .isEqualTo(java.util.Arrays.copyOfRange(big, from, from + 200));
      assertThat(multipart.list()).containsExactly(new BlockRef("t1", ID_1));
      assertThat(multipart.listIncomplete()).isEmpty();
    }
  }

  @Test
  void aWrongSecretFailsAtOpenNamingTheBucketAndEndpoint() {
    S3BucketConfig wrong = S3BucketConfig.of(server.endpoint(), bucketName, S3Server.ACCESS_KEY, "not-the-secret",
        "", true, S3BucketConfig.LookupType.PATH, 0);

    assertThatThrownBy(() -> S3Bucket.open(wrong, new S3BucketMetrics(registry)))
        .isInstanceOf(AccessDeniedException.class)
        .hasMessageContaining("\"" + bucketName + "\"")
        .hasMessageContaining("http://" + server.endpoint())
        .hasMessageContaining("access denied");
  }

  @Test
  void aMissingBucketFailsAtOpenNamingTheBucketAndEndpoint() {
    assertThatThrownBy(() -> S3Bucket.open(config("no-such-bucket"), new S3BucketMetrics(registry)))
        .isInstanceOf(NoSuchFileException.class)
        .hasMessageContaining("\"no-such-bucket\"")
        .hasMessageContaining("http://" + server.endpoint())
        .hasMessageContaining("does not exist");
  }
}
