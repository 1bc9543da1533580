package dev.weir.storage.bucket;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import software.amazon.awssdk.core.metrics.CoreMetric;
import software.amazon.awssdk.metrics.MetricCollection;
import software.amazon.awssdk.metrics.MetricPublisher;

/**
 * Metrics of an {@link S3Bucket}, fed by the SDK's own per-call metrics (it hands every finished
 * API call to this publisher): {@code weir_bucket_s3_requests_total{operation, outcome}} and
 * {@code weir_bucket_s3_retries_total{operation}}, the retries the SDK made before the call
 * succeeded or gave up.
 *
 * <p>Thread-safe (called from the SDK's calling threads).
 */
public final class S3BucketMetrics implements MetricPublisher {
  private final MeterRegistry registry;
  private final Counter uploadedBytes;

  public S3BucketMetrics(MeterRegistry registry) {
    this.registry = registry;
    uploadedBytes = Counter.builder("weir.bucket.s3.uploaded.bytes").baseUnit("bytes")
        .description("Bytes of block files uploaded (a retried part counts once).").register(registry);
  }

  @Override
  public void publish(MetricCollection call) {
    String op = first(call.metricValues(CoreMetric.OPERATION_NAME), "unknown");
    boolean ok = first(call.metricValues(CoreMetric.API_CALL_SUCCESSFUL), false);
    int retries = first(call.metricValues(CoreMetric.RETRY_COUNT), 0);
    Counter.builder("weir.bucket.s3.requests").description("S3 API calls by operation and outcome (a call"
        + " includes its retries).").tag("operation", op).tag("outcome", ok ? "success" : "error")
        .register(registry).increment();
    Counter retried = Counter.builder("weir.bucket.s3.retries").description("Retries of S3 API calls after a"
        + " 5xx, throttling or I/O error.").tag("operation", op).register(registry);
    if (retries > 0) {
      retried.increment(retries);
    }
  }

  void uploaded(long bytes) {
    uploadedBytes.increment(bytes);
  }

  private static <T> T first(List<T> values, T otherwise) {
    return values.isEmpty() ? otherwise : values.get(0);
  }

  @Override
  public void close() {}
}
