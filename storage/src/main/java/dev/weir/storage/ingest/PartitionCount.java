package dev.weir.storage.ingest;

import dev.weir.storage.errors.ServerErrorException;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises the ingest topic's partition count for scale-out (Admin API {@code createPartitions}),
 * never lowers it. Several ingesters may do it at once: Kafka refuses a request that does not
 * raise the count ({@link InvalidPartitionsException}), and that is success as long as the count
 * read afterwards is high enough. Stateless; thread-safe.
 */
public final class PartitionCount {
  private static final Logger log = LoggerFactory.getLogger(PartitionCount.class);
  /** Bound of each Admin call: a broker outage fails the attempt, the caller retries later. */
  private static final long CALL_TIMEOUT_SECONDS = 15;

  private PartitionCount() {}

  /**
   * Makes the topic have at least {@code count} partitions.
   *
   * @return the topic's partition count afterwards (at least {@code count})
   * @throws ServerErrorException when Kafka cannot be reached, the topic does not exist, or the
   *     count is still lower afterwards
   */
  public static int raiseTo(KafkaConfig config, int count) {
    Properties p = config.clientProperties();
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
    try (Admin admin = Admin.create(p)) {
      int before = current(admin, config.topic());
      if (before >= count) {
        return before;
      }
      try {
        admin.createPartitions(Map.of(config.topic(), NewPartitions.increaseTo(count))).all()
            .get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        log.info("msg=\"ingest topic partition count raised\" topic={} from={} to={}", config.topic(), before, count);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof InvalidPartitionsException)) {
          throw e;
        }
        // Someone else raised it in the meantime (to count or more): checked just below.
        log.info("msg=\"partition count not raised: already changed by another client\" topic={} err=\"{}\"",
            config.topic(), e.getCause().getMessage());
      }
      int after = current(admin, config.topic());
      if (after < count) {
        throw new ServerErrorException("topic " + config.topic() + " still has " + after + " partitions after"
            + " raising it to " + count);
      }
      return after;
    } catch (ExecutionException | TimeoutException e) {
      throw new ServerErrorException("cannot raise the partition count of topic " + config.topic() + " to " + count
          + " at " + config.address() + ": " + (e instanceof ExecutionException ? e.getCause() : e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while raising the partition count of topic " + config.topic(), e);
    }
  }

  private static int current(Admin admin, String topic)
      throws ExecutionException, TimeoutException, InterruptedException {
    return admin.describeTopics(List.of(topic)).allTopicNames().get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .get(topic).partitions().size();
  }
}
