package dev.weir.ingester.blockbuilder;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.blockbuilder.BlockBuilderSink;
import dev.weir.ingester.config.BucketConfig;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.AssignedConsumers;
import dev.weir.storage.ingest.batch.BatchConfig;
import dev.weir.storage.ingest.batch.BatchMetrics;
import dev.weir.storage.ingest.batch.BatchingConsumer;
import dev.weir.storage.progress.ProgressBoard;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the block-builder: a {@link BatchingConsumer} over this instance's partitions whose sink
 * builds blocks into a staging directory under the data dir and uploads them to the bucket. Not
 * ready while the consumer cannot make progress ({@link BatchingConsumer#notReadyReason()}: Kafka
 * unreachable, the topic missing, a permanent dead-letter failure) and once it stopped on a
 * non-retryable error.
 */
public final class BlockBuilderService implements Service {
  private static final Logger log = LoggerFactory.getLogger(BlockBuilderService.class);

  private final BlockBuilderConfig config;
  private final BucketConfig bucketConfig;
  private final KafkaConfig kafka;
  private final List<Integer> partitions;
  private final Path dataDir;
  private final long blockRangeMillis;
  private final MeterRegistry registry;
  private final ProgressBoard progress;
  private @Nullable BatchingConsumer consumer;
  private @Nullable Bucket bucket;

  public BlockBuilderService(BlockBuilderConfig config, BucketConfig bucketConfig, KafkaConfig kafka,
      List<Integer> partitions, Path dataDir, long blockRangeMillis, MeterRegistry registry, ProgressBoard progress) {
    this.progress = progress;
    this.config = config;
    this.bucketConfig = bucketConfig;
    this.kafka = kafka;
    this.partitions = List.copyOf(partitions);
    this.dataDir = dataDir;
    this.blockRangeMillis = blockRangeMillis;
    this.registry = registry;
  }

  @Override
  public String name() {
    return "block-builder";
  }

  @Override
  public void start() throws Exception {
    Bucket bucket = bucketConfig.open(registry);
    this.bucket = bucket;
    BlockBuilderSink sink = new BlockBuilderSink(bucket, dataDir.resolve("block-builder-staging"), blockRangeMillis,
        kafka.topic(), registry);
    BatchConfig bc = new BatchConfig(kafka.address(), kafka.topic(), kafka.clientId(), config.consumerGroup(),
        partitions, config.consumeInterval(), config.consumeIntervalBuffer(), config.maxRecordsPerCycle(),
        config.maxBytesPerCycle(), config.cycleTimeout(), config.lookbackOnNoCommit(), Duration.ofSeconds(1),
        Duration.ofMillis(500), Duration.ofSeconds(30), kafka.deadLetterTopic(), kafka.maxRecordSizeBytes(),
        kafka.security(), AssignedConsumers.fetchBytesFor(kafka.producerCompression()));
    BatchingConsumer c = new BatchingConsumer(bc, sink, new BatchMetrics(registry, "block.builder"),
        System::currentTimeMillis, progress);
    log.info("msg=\"block-builder starting\" partitions={} bucket={} group={}", partitions, bucket.describe(),
        config.consumerGroup());
    c.start();
    consumer = c;
  }

  @Override
  public @Nullable String notReadyReason() {
    BatchingConsumer c = consumer;
    if (c == null) {
      return "not started";
    }
    String reason = c.notReadyReason();
    if (reason != null) {
      return reason;
    }
    return c.running() ? null : "the batching consumer is not running";
  }

  @Override
  public void stop() throws InterruptedException {
    BatchingConsumer c = consumer;
    if (c != null) {
      c.close();
    }
    if (bucket instanceof AutoCloseable closeable) {
      try {
        closeable.close(); // the S3 client's connections
      } catch (Exception e) {
        log.warn("msg=\"cannot close the bucket\" err=\"{}\"", e.getMessage());
      }
    }
  }
}
