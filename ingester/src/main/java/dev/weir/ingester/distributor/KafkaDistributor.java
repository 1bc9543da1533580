package dev.weir.ingester.distributor;

import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.ExemplarsWritten;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PushErrors;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.PushHandler;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.Writer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * The distributor in Kafka mode: validates a push, shards each series onto the ACTIVE partition
 * owning its token in the partition ring (among the tenant's shuffle shard when its
 * {@code ingestion_partitions_tenant_shard_size} is set), and produces one record per partition; returns only
 * when Kafka acknowledged them all. Refused series are reported after the valid ones were
 * written; a Kafka failure (or no ACTIVE partition) is a server error, so the client retries.
 * The offsets produced go to the caller's {@link ProducedOffsets} capture, the exemplars produced
 * to its {@link ExemplarsWritten} tally.
 *
 * <p>Thread-safe.
 */
public final class KafkaDistributor implements PushHandler {
  private final Function<String, Limits> limits;
  private final Supplier<PartitionRing> partitions;
  private final Supplier<Writer> writer;
  private final IngesterMetrics metrics;
  private final SeriesRouter router;
  private final RateLimitedLog log =
      new RateLimitedLog(LoggerFactory.getLogger(KafkaDistributor.class), TimeUnit.SECONDS.toNanos(1), System::nanoTime);

  public KafkaDistributor(Function<String, Limits> limits, Supplier<PartitionRing> partitions, Supplier<Writer> writer,
      IngesterMetrics metrics, LongSupplier clock) {
    this.limits = limits;
    this.partitions = partitions;
    this.writer = writer;
    this.metrics = metrics;
    this.router = new SeriesRouter(metrics, log, clock);
  }

  @Override
  public void push(String tenant, WriteRequest request) {
    PartitionRing ring = partitions.get();
    if (ring.activePartitions().isEmpty()) {
      throw new ServerErrorException("no ACTIVE partition in the partition ring yet: no ingester has registered as"
          + " a partition owner (see /ingester/partition-ring)");
    }
    PushErrors errors = new PushErrors(tenant, metrics, log);
    Limits l = limits.apply(tenant);
    PartitionRing shard = ring.shuffleShard(tenant, l.ingestionPartitionsTenantShardSize());
    Map<Integer, WriteRequest.Builder> routed = router.route(tenant, request, l, shard::partitionFor, errors);
    Map<Integer, WriteRequest> byPartition = new HashMap<>();
    routed.forEach((p, b) -> byPartition.put(p, b.build()));
    if (!byPartition.isEmpty()) {
      ProducedOffsets.record(writer.get().write(tenant, byPartition));
      // Written = produced: the ingesters' later refusals (out of order) are not seen by the client,
      // as for samples.
      long exemplars = 0;
      for (WriteRequest r : byPartition.values()) {
        for (dev.weir.proto.prompb.TimeSeries ts : r.getTimeseriesList()) {
          exemplars += ts.getExemplarsCount();
        }
      }
      ExemplarsWritten.record(exemplars);
    }
    errors.throwIfAny();
  }
}
