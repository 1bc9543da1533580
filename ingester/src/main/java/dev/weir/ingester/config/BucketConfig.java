package dev.weir.ingester.config;

import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.bucket.S3Bucket;
import dev.weir.storage.bucket.S3BucketConfig;
import dev.weir.storage.bucket.S3BucketMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The long-term block storage every target shares (the block-builder and the ingesters' shipper
 * write to it, the store-gateway reads it), with Mimir's {@code blocks-storage.*} flag names.
 *
 * @param backend {@code filesystem} (the embedded default) or {@code s3}
 * @param filesystemDir root of the filesystem bucket
 * @param s3 where the S3 bucket is; null unless the backend is {@code s3}
 */
public record BucketConfig(String backend, Path filesystemDir, @Nullable S3BucketConfig s3) {
  public static final String FILESYSTEM = "filesystem";
  public static final String S3 = "s3";

  /**
   * Opens the configured bucket; fails with the bucket's location in the message (for S3, after a
   * HEAD request: a missing bucket or refused credentials fail here, at start).
   */
  public Bucket open(MeterRegistry registry) throws IOException {
    if (s3 != null) {
      return S3Bucket.open(s3, new S3BucketMetrics(registry));
    }
    return new FilesystemBucket(filesystemDir);
  }

  /** Flag definitions. */
  public static final class Flags {
    private static final String S3_PREFIX = "blocks-storage.s3.";
    private final Flag<String> backend;
    private final Flag<String> dir;
    private final Flag<String> endpoint;
    private final Flag<String> bucketName;
    private final Flag<String> accessKeyId;
    private final Flag<String> secretAccessKey;
    private final Flag<String> region;
    private final Flag<Boolean> insecure;
    private final Flag<String> lookup;
    private final Flag<Integer> maxRetries;

    public Flags(FlagSet fs) {
      backend = fs.oneOf("blocks-storage.backend", FILESYSTEM, List.of(FILESYSTEM, S3), "Bucket that long-term"
          + " blocks are uploaded to (by the block-builder) and read from: a directory (filesystem) or an"
          + " S3-compatible object store (s3: AWS S3, MinIO, GCS' XML API, Ceph...).");
      dir = fs.string("blocks-storage.filesystem.dir", "blocks", "Directory of the filesystem bucket: blocks go"
          + " to <dir>/<tenant>/<block ID>/.");
      endpoint = fs.string(S3_PREFIX + "endpoint", "", "S3 endpoint as host[:port], without a scheme, e.g."
          + " s3.eu-west-1.amazonaws.com, minio.storage:9000 or storage.googleapis.com. Required with backend s3.");
      bucketName = fs.string(S3_PREFIX + "bucket-name", "", "S3 bucket; it must exist (checked at start)."
          + " Blocks go to <tenant>/<block ID>/ in it. Required with backend s3.");
      accessKeyId = fs.string(S3_PREFIX + "access-key-id", "", "S3 access key ID. Empty, with an empty"
          + " secret-access-key: the AWS SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,"
          + " ~/.aws profile, container or EC2 instance role).");
      secretAccessKey = fs.string(S3_PREFIX + "secret-access-key", "", "S3 secret access key (with"
          + " access-key-id); on Kubernetes pass it from a Secret as $(ENV_VAR).");
      region = fs.string(S3_PREFIX + "region", "", "S3 region that requests are signed for; empty means"
          + " us-east-1 (MinIO's default); auto for GCS.");
      insecure = fs.bool(S3_PREFIX + "insecure", false, "Use http:// instead of https:// for the S3 endpoint.");
      lookup = fs.oneOf(S3_PREFIX + "bucket-lookup-type", "auto", Arrays.stream(S3BucketConfig.LookupType.values())
          .map(S3BucketConfig.LookupType::flagValue).toList(), "Bucket addressing: path (endpoint/bucket/key,"
          + " what MinIO and most self-hosted stores need), virtual-hosted (bucket.endpoint/key) or auto"
          + " (virtual-hosted for *.amazonaws.com and storage.googleapis.com when the bucket name has no dot,"
          + " path otherwise).");
      maxRetries = fs.integer(S3_PREFIX + "max-retries", 10, "Retries of one S3 request after a 5xx, a"
          + " throttling error or an I/O error, waiting a random time up to 100 ms, 200 ms, 400 ms... (doubling,"
          + " at most 10 s): 10 retries wait at most 43 s in all. A request that still fails fails the upload,"
          + " and the block-builder redoes its cycle.");
    }

    public BucketConfig build() throws ConfigException {
      if (dir.get().isBlank()) {
        throw new ConfigException("blocks-storage.filesystem.dir must not be empty");
      }
      S3BucketConfig s3 = null;
      if (backend.get().equals(S3)) {
        s3 = s3Config();
      }
      return new BucketConfig(backend.get(), Path.of(dir.get()), s3);
    }

    private S3BucketConfig s3Config() throws ConfigException {
      for (Flag<String> required : List.of(endpoint, bucketName)) {
        if (required.get().isBlank()) {
          throw new ConfigException(required.name() + " must be set with blocks-storage.backend=s3");
        }
      }
      if (endpoint.get().contains("://") || endpoint.get().contains("/")) {
        throw new ConfigException(endpoint.name() + " must be host[:port] without a scheme or path (use "
            + insecure.name() + " for http): " + endpoint.get());
      }
      if (accessKeyId.get().isEmpty() != secretAccessKey.get().isEmpty()) {
        Flag<String> missing = accessKeyId.get().isEmpty() ? accessKeyId : secretAccessKey;
        throw new ConfigException(missing.name() + " must be set: set both " + accessKeyId.name() + " and "
            + secretAccessKey.name() + ", or neither (the AWS SDK's default credentials)");
      }
      if (maxRetries.get() < 0) {
        throw new ConfigException(maxRetries.name() + " must be >= 0: " + maxRetries.get());
      }
      return S3BucketConfig.of(endpoint.get(), bucketName.get(), accessKeyId.get(), secretAccessKey.get(),
          region.get(), insecure.get(), S3BucketConfig.LookupType.parse(lookup.get()), maxRetries.get());
    }
  }
}
