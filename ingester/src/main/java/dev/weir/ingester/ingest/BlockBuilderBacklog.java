package dev.weir.ingester.ingest;

import dev.weir.storage.ingest.KafkaConfig;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records of a partition the block-builder has not built into blocks yet: the partition's end
 * offset minus the block-builder group's committed offset (a block-builder commits only once the
 * cycle's blocks are in the bucket, and its committed offset is the next record to read). -1 when
 * unknown: the group never committed a partition that has records, or Kafka did not answer.
 *
 * <p>Asks Kafka on every call with a short-lived admin client (it backs an operator's GET, not a
 * hot path). Thread-safe.
 */
public final class BlockBuilderBacklog implements LongSupplier {
  private static final Logger log = LoggerFactory.getLogger(BlockBuilderBacklog.class);
  /** Bound on each admin call, so that an unreachable Kafka answers the GET within seconds. */
  private static final long TIMEOUT_MS = 5_000;

  private final KafkaConfig kafka;
  private final String group;
  private final TopicPartition partition;

  public BlockBuilderBacklog(KafkaConfig kafka, String group, int partition) {
    this.kafka = kafka;
    this.group = group;
    this.partition = new TopicPartition(kafka.topic(), partition);
  }

  @Override
  public long getAsLong() {
    Properties p = kafka.clientProperties();
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
    try (Admin admin = Admin.create(p)) {
      long end = admin.listOffsets(Map.of(partition, OffsetSpec.latest())).partitionResult(partition)
          .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset();
      OffsetAndMetadata committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
          .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(partition);
      if (committed == null) {
        return end == 0 ? 0 : -1;
      }
      return Math.max(0, end - committed.offset());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      log.warn("msg=\"cannot read the block-builder's progress\" group={} partition={} err=\"{}\"", group,
          partition, String.valueOf(e.getMessage()).replace('"', '\''));
      return -1;
    }
  }
}
