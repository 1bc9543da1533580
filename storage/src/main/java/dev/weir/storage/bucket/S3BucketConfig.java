package dev.weir.storage.bucket;

import java.time.Duration;
import java.util.Locale;

/**
 * Where and how {@link S3Bucket} reaches an S3-compatible object store. The flags that fill it are
 * Mimir's {@code blocks-storage.s3.*} ({@code dev.weir.ingester.config.BucketConfig}); their help
 * is the documentation, this record only checks invariants.
 *
 * @param endpoint {@code host[:port]}, no scheme
 * @param bucketName the bucket, which must exist
 * @param accessKeyId with {@code secretAccessKey}; both empty: the SDK's default chain (AWS_*
 *     environment variables, profile, container or instance role)
 * @param region signing region; empty means {@code us-east-1}
 * @param insecure {@code http://} instead of {@code https://}
 * @param lookup path-style or virtual-hosted-style bucket addressing
 * @param maxRetries retries of one request on 5xx, throttling and I/O errors
 * @param retryBaseDelay first backoff; doubling, full jitter, capped at {@code retryMaxDelay}
 * @param multipartThresholdBytes files larger than this are uploaded in parts
 * @param partSizeBytes size of each part but the last (S3 wants at least 5 MiB)
 */
public record S3BucketConfig(String endpoint, String bucketName, String accessKeyId, String secretAccessKey,
    String region, boolean insecure, LookupType lookup, int maxRetries, Duration retryBaseDelay,
    Duration retryMaxDelay, long multipartThresholdBytes, long partSizeBytes) {

  /** Files above 64 MiB go in parts: a block's chunk files are at most 512 MiB, so at most 32 parts. */
  public static final long DEFAULT_MULTIPART_THRESHOLD = 64L << 20;
  /** 16 MiB parts: each is buffered in memory once so that a retry can send it again. */
  public static final long DEFAULT_PART_SIZE = 16L << 20;
  /** S3's smallest part (except the last one). */
  public static final long MIN_PART_SIZE = 5L << 20;

  /** Bucket addressing, as Mimir's {@code bucket-lookup-type}. */
  public enum LookupType {
    /** Virtual-hosted for AWS and Google endpoints when the bucket name has no dot, path otherwise. */
    AUTO("auto"),
    /** {@code http(s)://endpoint/bucket/key}: MinIO, S3Proxy, Ceph and most self-hosted stores. */
    PATH("path"),
    /** {@code http(s)://bucket.endpoint/key}. */
    VIRTUAL_HOSTED("virtual-hosted");

    private final String flagValue;

    LookupType(String flagValue) {
      this.flagValue = flagValue;
    }

    public String flagValue() {
      return flagValue;
    }

    public static LookupType parse(String s) {
      for (LookupType t : values()) {
        if (t.flagValue.equals(s)) {
          return t;
        }
      }
      throw new IllegalArgumentException("unknown bucket lookup type: " + s);
    }
  }

  public S3BucketConfig {
    if (endpoint.isBlank() || endpoint.contains("://") || endpoint.contains("/")) {
      throw new IllegalArgumentException("endpoint must be host[:port] without a scheme or path: " + endpoint);
    }
    if (bucketName.isBlank()) {
      throw new IllegalArgumentException("bucket name must not be empty");
    }
    if (accessKeyId.isEmpty() != secretAccessKey.isEmpty()) {
      throw new IllegalArgumentException("set both the access key ID and the secret access key, or neither");
    }
    if (maxRetries < 0) {
      throw new IllegalArgumentException("max retries must be >= 0: " + maxRetries);
    }
    if (partSizeBytes < MIN_PART_SIZE || multipartThresholdBytes < partSizeBytes) {
      throw new IllegalArgumentException("need part size >= 5 MiB and multipart threshold >= part size: "
          + partSizeBytes + ", " + multipartThresholdBytes);
    }
  }

  /** A config with the default retries (10, from 100 ms up to 10 s) and multipart sizes. */
  public static S3BucketConfig of(String endpoint, String bucketName, String accessKeyId, String secretAccessKey,
      String region, boolean insecure, LookupType lookup, int maxRetries) {
    return new S3BucketConfig(endpoint, bucketName, accessKeyId, secretAccessKey, region, insecure, lookup,
        maxRetries, Duration.ofMillis(100), Duration.ofSeconds(10), DEFAULT_MULTIPART_THRESHOLD,
        DEFAULT_PART_SIZE);
  }

  /** The same config with other multipart sizes (tests lower them). */
  public S3BucketConfig withMultipart(long thresholdBytes, long partBytes) {
    return new S3BucketConfig(endpoint, bucketName, accessKeyId, secretAccessKey, region, insecure, lookup,
        maxRetries, retryBaseDelay, retryMaxDelay, thresholdBytes, partBytes);
  }

  /** The same config with other retry delays (tests shorten them). */
  public S3BucketConfig withRetryDelays(Duration base, Duration max) {
    return new S3BucketConfig(endpoint, bucketName, accessKeyId, secretAccessKey, region, insecure, lookup,
        maxRetries, base, max, multipartThresholdBytes, partSizeBytes);
  }

  /** {@code http(s)://endpoint}. */
  public String endpointUrl() {
    return (insecure ? "http://" : "https://") + endpoint;
  }

  /** Whether requests name the bucket in the path rather than in the host name. */
  public boolean pathStyle() {
    return switch (lookup) {
      case PATH -> true;
      case VIRTUAL_HOSTED -> false;
      case AUTO -> {
        String host = endpoint.toLowerCase(Locale.ROOT).replaceFirst(":\\d+$", "");
        boolean knownVirtual = host.endsWith(".amazonaws.com") || host.equals("storage.googleapis.com");
        yield !knownVirtual || bucketName.contains(".");
      }
    };
  }

  /** The signing region. */
  public String regionOrDefault() {
    return region.isBlank() ? "us-east-1" : region;
  }

  @Override
  public String toString() {
    // The secret never reaches a log line.
    return "S3BucketConfig[endpoint=" + endpointUrl() + ", bucket=" + bucketName + ", region=" + regionOrDefault()
        + ", pathStyle=" + pathStyle() + ", accessKeyId=" + accessKeyId + ", maxRetries=" + maxRetries + "]";
  }
}
