package dev.weir.storage.bucket;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;

/**
 * A child process for {@link S3BucketFaultsIT}: uploads one local block to an S3 bucket and exits.
 * Arguments: endpoint, bucket, access key, secret, tenant, block ID, block directory, multipart
 * threshold and part size in bytes.
 */
public final class S3UploadMain {
  private S3UploadMain() {}

  public static void main(String[] args) throws Exception {
    S3BucketConfig config = S3BucketConfig.of(args[0], args[1], args[2], args[3], "", true,
        S3BucketConfig.LookupType.PATH, 3).withMultipart(Long.parseLong(args[7]), Long.parseLong(args[8]));
    try (S3Bucket bucket = S3Bucket.open(config, new S3BucketMetrics(new SimpleMeterRegistry()))) {
      bucket.upload(args[4], args[5], Path.of(args[6]));
    }
    System.out.println("uploaded");
  }
}
