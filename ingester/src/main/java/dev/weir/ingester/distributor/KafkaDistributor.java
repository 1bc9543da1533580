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
import dev.weir.storage.ingest.RecordV1Builder;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.wire.WireBatch;
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

  /** The tenant's partitions (its shuffle shard, or all). */
  private PartitionRing shard(String tenant, Limits l) {
    PartitionRing ring = partitions.get();
    if (ring.activePartitions().isEmpty()) {
      throw new ServerErrorException("no ACTIVE partition in the partition ring yet: no ingester has registered as"
          + " a partition owner (see /ingester/partition-ring)");
    }
    return ring.shuffleShard(tenant, l.ingestionPartitionsTenantShardSize());
  }

  /**
   * The hot path of remote write 1.0 with version-1 records: series are routed and produced as
   * the bytes the client sent ({@link SeriesRouter#routeWire}), so a valid request is never
   * parsed into objects nor encoded again. Other requests (remote write 2.0, a writer producing
   * version 2) take {@link #push(String, WriteRequest)}.
   */
  @Override
  public void push(String tenant, WireBatch batch) {
    Writer w = writer.get();
    if (w.version() != 1 || (batch.size() > 0 && batch.isV2(0))) {
      PushHandler.super.push(tenant, batch);
      return;
    }
    Limits l = limits.apply(tenant);
    PartitionRing shard = shard(tenant, l);
    PushErrors errors = new PushErrors(tenant, metrics, log);
    Map<Integer, RecordV1Builder> routed = router.routeWire(tenant, batch, l, shard::partitionFor, errors);
    if (!routed.isEmpty()) {
      ProducedOffsets.record(w.writeV1(tenant, routed));
      long exemplars = 0;
      for (RecordV1Builder b : routed.values()) {
        exemplars += b.exemplars();
      }
      ExemplarsWritten.record(exemplars);
    }
    errors.throwIfAny();
  }

  @Override
  public void push(String tenant, WriteRequest request) {
    Limits l = limits.apply(tenant);
    PartitionRing shard = shard(tenant, l);
    PushErrors errors = new PushErrors(tenant, metrics, log);
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
