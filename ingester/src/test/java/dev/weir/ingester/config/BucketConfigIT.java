package dev.weir.ingester.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.S3Bucket;
import dev.weir.storage.testing.S3Server;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The blocks-storage.s3.* flags open a real S3 bucket (S3Proxy), and a wrong secret or a missing
 * bucket stops start-up with a message that names the bucket and the endpoint.
 */
class BucketConfigIT {
  static S3Server server;
  @TempDir static Path serverDir;

  @BeforeAll
  static void startServer() throws Exception {
    server = S3Server.start(serverDir);
    server.createBucket("weir-blocks");
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  BucketConfig s3(String bucket, String secret) throws Exception {
    return BucketConfigTest.parse("--blocks-storage.backend=s3", "--blocks-storage.s3.endpoint=" + server.endpoint(),
        "--blocks-storage.s3.bucket-name=" + bucket, "--blocks-storage.s3.access-key-id=" + S3Server.ACCESS_KEY,
        "--blocks-storage.s3.secret-access-key=" + secret, "--blocks-storage.s3.insecure",
        "--blocks-storage.s3.max-retries=1");
  }

  @Test
  void theS3FlagsOpenTheBucket() throws Exception {
    Bucket b = s3("weir-blocks", S3Server.SECRET_KEY).open(new SimpleMeterRegistry());
    try {
      assertThat(b).isInstanceOf(S3Bucket.class);
      assertThat(b.describe()).isEqualTo("s3:http://" + server.endpoint() + "/weir-blocks");
      assertThat(b.list()).isEmpty();
    } finally {
      ((S3Bucket) b).close();
    }
  }

  @Test
  void aWrongSecretOrAMissingBucketFailsAtOpenNamingBucketAndEndpoint() throws Exception {
    BucketConfig wrongSecret = s3("weir-blocks", "wrong");
    assertThatThrownBy(() -> wrongSecret.open(new SimpleMeterRegistry()))
        .hasMessageContaining("bucket \"weir-blocks\" at http://" + server.endpoint())
        .hasMessageContaining("access denied");
    BucketConfig missing = s3("no-such-bucket", S3Server.SECRET_KEY);
    assertThatThrownBy(() -> missing.open(new SimpleMeterRegistry()))
        .hasMessageContaining("bucket \"no-such-bucket\" at http://" + server.endpoint())
        .hasMessageContaining("does not exist");
  }
}
