package dev.weir.ingester.ingest;

import dev.weir.ingester.shipper.ShipperService;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.partition.PartitionStateChange;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.Tsdb;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Whether the ingester of an INACTIVE partition may be removed (scale-in), from what the ingester
 * can check by itself:
 *
 * <ul>
 *   <li>the partition has been INACTIVE for at least the queriers' look-back at ingesters
 *       ({@code querier.query-ingesters-within}): distributors stopped writing to it when it turned
 *       INACTIVE, so after the look-back no query asks ingesters for anything only it holds;
 *   <li>everything it holds is in long-term storage: with the shipper, its last round left no
 *       block pending and the head holds no series (all compacted into shipped blocks). Without the
 *       shipper the block-builder writes the partition's blocks: its consumer group must have
 *       committed the partition up to its end; when that cannot be read the storage condition is
 *       reported as unchecked and the operator checks by hand ({@code docs/operations.md}, scale-in).
 * </ul>
 *
 * Stateless; thread-safe.
 */
public final class DownscaleReadiness {
  private DownscaleReadiness() {}

  /**
   * What the ingester holds outside long-term storage.
   *
   * @param shipperEnabled whether this ingester ships its blocks (otherwise a block-builder does)
   * @param pendingBlocks local blocks not in the bucket as of the shipper's last round; -1 before
   *     its first round
   * @param headSeries series in the heads of all tenants
   * @param blockBuilderBacklog without the shipper: records of the partition the block-builder has
   *     not built into blocks yet ({@link BlockBuilderBacklog}), -1 when unknown
   */
  public record Storage(boolean shipperEnabled, int pendingBlocks, long headSeries, long blockBuilderBacklog) {}

  /** Whether the storage condition holds, could not be checked here, or does not hold yet. */
  public enum StorageState { OK, PENDING, UNCHECKED }

  /**
   * The decision.
   *
   * @param leaveAfterMillis when the look-back condition is (or will be) met; 0 when the
   *     partition is not INACTIVE or the look-back is 0
   * @param reasons why {@code readyToLeave} is false (empty when it is true)
   */
  public record Decision(boolean readyToLeave, boolean inactiveLongEnough, long leaveAfterMillis,
      StorageState storage, List<String> reasons) {}

  /**
   * What an ingester with {@code shipper} (null: none, the block-builder writes the blocks, whose
   * {@code blockBuilderBacklog} is then asked) and {@code tsdb} holds outside long-term storage.
   */
  public static Supplier<Storage> storageOf(@Nullable ShipperService shipper, Tsdb tsdb,
      LongSupplier blockBuilderBacklog) {
    return () -> {
      long series = 0;
      for (String tenant : tsdb.tenants()) {
        TenantDb db = tsdb.existing(tenant);
        series += db == null ? 0 : db.head().numSeries();
      }
      return shipper == null ? new Storage(false, -1, series, blockBuilderBacklog.getAsLong())
          : new Storage(true, shipper.pendingBlocks(), series, -1);
    };
  }

  /** Decides for {@code partition} at {@code nowMillis}. */
  public static Decision decide(PartitionDesc partition, long nowMillis, Duration lookback, Storage storage) {
    List<String> reasons = new ArrayList<>();
    boolean inactive = partition.getState() == PartitionState.PARTITION_INACTIVE;
    long leaveAfter = 0;
    boolean longEnough = false;
    if (!inactive) {
      reasons.add("partition " + partition.getId() + " is " + PartitionStateChange.name(partition.getState())
          + ": POST /ingester/prepare-partition-downscale first");
    } else if (lookback.isZero()) {
      reasons.add("querier.query-ingesters-within is 0: queriers ask ingesters for every time range, so an"
          + " ingester's data is never only in long-term storage as far as queries go");
    } else {
      leaveAfter = partition.getStateTimestamp() + lookback.toMillis();
      longEnough = nowMillis >= leaveAfter;
      if (!longEnough) {
        reasons.add("INACTIVE for " + Duration.ofMillis(nowMillis - partition.getStateTimestamp()).toSeconds()
            + "s of the " + lookback.toSeconds() + "s queriers look back at ingesters (querier.query-ingesters-within)");
      }
    }
    StorageState s = storage(storage, reasons);
    return new Decision(reasons.isEmpty(), longEnough, leaveAfter, s, List.copyOf(reasons));
  }

  private static StorageState storage(Storage storage, List<String> reasons) {
    if (!storage.shipperEnabled()) {
      if (storage.blockBuilderBacklog() < 0) {
        reasons.add("no shipper, and the block-builder's progress is unknown (its group never committed this"
            + " partition, or Kafka did not answer): check its committed offset by hand (docs/operations.md)");
        return StorageState.UNCHECKED;
      }
      if (storage.blockBuilderBacklog() > 0) {
        reasons.add("the block-builder has " + storage.blockBuilderBacklog()
            + " record(s) of this partition not built into blocks yet");
        return StorageState.PENDING;
      }
      return StorageState.OK;
    }
    int before = reasons.size();
    if (storage.pendingBlocks() < 0) {
      reasons.add("the shipper has not completed a round yet");
    } else if (storage.pendingBlocks() > 0) {
      reasons.add(storage.pendingBlocks() + " local block(s) not shipped to the bucket yet");
    }
    if (storage.headSeries() > 0) {
      reasons.add("the head holds " + storage.headSeries() + " series not compacted into a block yet");
    }
    return reasons.size() == before ? StorageState.OK : StorageState.PENDING;
  }
}
