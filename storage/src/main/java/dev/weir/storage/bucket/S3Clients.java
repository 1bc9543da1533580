package dev.weir.storage.bucket;

import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Builds the SDK client of an {@link S3Bucket}: the JDK's HttpURLConnection transport (no Netty,
 * no Apache HttpClient: a block-builder makes a few sequential requests per cycle), the endpoint
 * and addressing of the config, and an explicit retry strategy.
 *
 * <p>Stateless.
 */
final class S3Clients {
  /** Connecting to an object store on the same network or region takes milliseconds. */
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  /** Longest silence while reading a response; a slow part upload keeps sending. */
  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(60);

  private S3Clients() {}

  static S3Client create(S3BucketConfig config, S3BucketMetrics metrics) {
    return S3Client.builder()
        .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(CONNECT_TIMEOUT)
            .socketTimeout(SOCKET_TIMEOUT).build())
        .endpointOverride(URI.create(config.endpointUrl()))
        .forcePathStyle(config.pathStyle())
        .region(Region.of(config.regionOrDefault()))
        .credentialsProvider(credentials(config))
        // Checksums only where S3 requires them: the SDK's default trailing CRC32 (aws-chunked
        // bodies) is refused by several S3-compatible stores (GCS' interoperability API among
        // them). SigV4 over http, and TLS over https, protect the bodies.
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .overrideConfiguration(o -> o.retryStrategy(retryStrategy(config)).addMetricPublisher(metrics))
        .build();
  }

  /**
   * The SDK's standard AWS conditions (5xx, throttling codes, I/O errors, clock skew) with our
   * attempt count and backoff: exponential with full jitter from the base delay, capped, the same
   * for throttling. The circuit breaker (a retry quota shared by the client's calls) is off: one
   * block-builder's few calls should each get every retry, and the cycle's own retry backs off on
   * top.
   */
  static RetryStrategy retryStrategy(S3BucketConfig config) {
    BackoffStrategy backoff = BackoffStrategy.exponentialDelay(config.retryBaseDelay(), config.retryMaxDelay());
    return AwsRetryStrategy.standardRetryStrategy().toBuilder()
        .maxAttempts(config.maxRetries() + 1)
        .backoffStrategy(backoff)
        .throttlingBackoffStrategy(backoff)
        .circuitBreakerEnabled(false)
        .build();
  }

  private static AwsCredentialsProvider credentials(S3BucketConfig config) {
    if (config.accessKeyId().isEmpty()) {
      return DefaultCredentialsProvider.builder().build();
    }
    return StaticCredentialsProvider.create(AwsBasicCredentials.create(config.accessKeyId(),
        config.secretAccessKey()));
  }
}
