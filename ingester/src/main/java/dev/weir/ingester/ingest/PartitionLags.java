package dev.weir.ingester.ingest;

import dev.weir.ingester.ring.RingPages;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.ingest.KafkaConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every partition's consumer lag in records, as {@code /ingester/partition-ring} shows it: the
 * partition's end offset minus the committed offset of its owners' consumer groups (each owner
 * commits to its own group, {@link IngestStorageConfig#kafkaFor}), the largest among the owners
 * (the slowest zone). A partition none of whose owners has committed yet, or that Kafka did not
 * answer for, is unknown (-1, "-" on the page).
 *
 * <p>Bounded: one round of two Admin requests (end offsets of the ring's partitions, committed
 * offsets of their owners' groups) at most every {@code minInterval}, each bounded by 5 s; the
 * page between rounds shows the last round's numbers. The round runs on the caller's thread (a
 * page request), so nothing runs while nobody looks. Thread-safe; {@link #close()} closes the
 * admin client.
 */
public final class PartitionLags implements RingPages.PartitionLag, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PartitionLags.class);
  /** Bound on each admin call, so that an unreachable Kafka delays the page by seconds at most. */
  private static final long TIMEOUT_MS = 5_000;
  /**
   * The least time between two rounds in a process: the page is for people, a 10 s old lag is
   * fresh enough, and a page refreshed in a loop costs Kafka two requests per 10 s at most.
   */
  public static final Duration MIN_INTERVAL = Duration.ofSeconds(10);

  private final KafkaConfig kafka;
  private final Supplier<PartitionRing> ring;
  private final Function<String, String> groupOfOwner;
  private final LongSupplier clock;
  private final long minIntervalMillis;
  private @Nullable Admin admin;
  private Map<Integer, Long> last = Map.of();
  private long lastRound = Long.MIN_VALUE;

  /**
   * @param groupOfOwner the consumer group an owner (ingester ID) commits to
   * @param minInterval the least time between two rounds of requests to Kafka
   */
  public PartitionLags(KafkaConfig kafka, Supplier<PartitionRing> ring, Function<String, String> groupOfOwner,
      LongSupplier clock, Duration minInterval) {
    this.kafka = kafka;
    this.ring = ring;
    this.groupOfOwner = groupOfOwner;
    this.clock = clock;
    this.minIntervalMillis = minInterval.toMillis();
  }

  /**
   * The fleet's lags as every Kafka-mode process shows them: each owner's consumer group as its
   * ingester names it ({@link IngestStorageConfig#kafkaFor}), one round per {@link #MIN_INTERVAL}.
   */
  public static PartitionLags of(IngestStorageConfig ingest, Supplier<PartitionRing> ring, LongSupplier clock) {
    return new PartitionLags(ingest.kafka(), ring, owner -> ingest.kafkaFor(owner).consumerGroup(), clock,
        MIN_INTERVAL);
  }

  @Override
  public synchronized long records(int partition) {
    long now = clock.getAsLong();
    if (lastRound == Long.MIN_VALUE || now - lastRound >= minIntervalMillis) {
      lastRound = now;
      last = round();
    }
    return last.getOrDefault(partition, -1L);
  }

  /** Lag per partition from end offsets and committed offsets by group. */
  static Map<Integer, Long> lags(Map<Integer, Long> ends, Map<Integer, List<String>> groupsByPartition,
      Map<String, Map<Integer, Long>> committedByGroup) {
    Map<Integer, Long> out = new HashMap<>();
    ends.forEach((partition, end) -> {
      long worst = -1;
      for (String g : groupsByPartition.getOrDefault(partition, List.of())) {
        Long committed = committedByGroup.getOrDefault(g, Map.of()).get(partition);
        if (committed != null) {
          worst = Math.max(worst, Math.max(0, end - committed));
        }
      }
      if (worst >= 0) {
        out.put(partition, worst);
      }
    });
    return out;
  }

  private Map<Integer, Long> round() {
    PartitionRing r = ring.get();
    Map<Integer, List<String>> groups = new HashMap<>();
    for (Map.Entry<String, OwnerDesc> e : r.desc().getOwnersMap().entrySet()) {
      groups.computeIfAbsent(e.getValue().getOwnedPartition(), p -> new ArrayList<>())
          .add(groupOfOwner.apply(e.getKey()));
    }
    if (groups.isEmpty()) {
      return Map.of();
    }
    try {
      Admin a = admin();
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      groups.keySet().forEach(p -> latest.put(new TopicPartition(kafka.topic(), p), OffsetSpec.latest()));
      Map<Integer, Long> ends = new HashMap<>();
      a.listOffsets(latest).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
          .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
      Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
      groups.forEach((p, gs) -> gs.forEach(g -> specs.computeIfAbsent(g, x -> new ListConsumerGroupOffsetsSpec())));
      Map<String, Map<Integer, Long>> committed = new HashMap<>();
      a.listConsumerGroupOffsets(specs).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).forEach((g, offsets) -> {
        Map<Integer, Long> byPartition = new HashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
          if (e.getKey().topic().equals(kafka.topic()) && e.getValue() != null) {
            byPartition.put(e.getKey().partition(), e.getValue().offset());
          }
        }
        committed.put(g, byPartition);
      });
      return lags(ends, groups, committed);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Map.of();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      log.warn("msg=\"cannot read the partitions' lag for the ring page\" err=\"{}\"",
          String.valueOf(e.getMessage()).replace('"', '\''));
      return Map.of();
    }
  }

  private Admin admin() {
    Admin a = admin;
    if (a == null) {
      Properties p = kafka.clientProperties();
      p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS);
      a = Admin.create(p);
      admin = a;
    }
    return a;
  }

  @Override
  public synchronized void close() {
    Admin a = admin;
    if (a != null) {
      a.close(Duration.ofSeconds(5));
      admin = null;
    }
  }
}
