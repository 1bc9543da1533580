package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.wal.WalReader;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What {@link Tsdb#open()} found when replaying the WALs: per tenant the {@link WalReader.Result},
 * and totals over tenants. After a repair of a WAL corrupt in the middle, data after the
 * corruption is gone; in Kafka mode {@link #firstDroppedSourceOffset()} tells from which offset to
 * re-consume to get it back (when the records carried source offsets).
 *
 * <p>Immutable.
 *
 * @param tenants replay results of the tenants opened at start-up, by tenant
 */
public record ReplayReport(Map<String, WalReader.Result> tenants) {
  public ReplayReport {
    tenants = Map.copyOf(tenants);
  }

  /** Tenants whose WAL was corrupt in the middle and truncated there (data after it lost), sorted. */
  public List<String> corruptionRepairedTenants() {
    return tenants.entrySet().stream().filter(e -> e.getValue().repairedCorruption()).map(Map.Entry::getKey)
        .sorted().toList();
  }

  /** Whether any WAL was corrupt in the middle and truncated there. */
  public boolean repairedCorruption() {
    return tenants.values().stream().anyMatch(WalReader.Result::repairedCorruption);
  }

  /** Intact records dropped by repairs (after a corruption), all tenants. */
  public long droppedRecords() {
    return tenants.values().stream().mapToLong(WalReader.Result::droppedRecords).sum();
  }

  /** Bytes dropped by repairs (torn tails and corruptions, including deleted segments), all tenants. */
  public long droppedBytes() {
    return tenants.values().stream().mapToLong(WalReader.Result::truncatedBytes).sum();
  }

  /** Whole segments deleted by repairs, all tenants. */
  public int droppedSegments() {
    return tenants.values().stream().mapToInt(WalReader.Result::droppedSegments).sum();
  }

  /**
   * The highest source (Kafka) offset any WAL had applied before the restart, or -1: a record at or
   * below it read again is a re-read (with concurrent shards, a few records just below it may have
   * been in flight at the crash and are new).
   */
  public long maxSourceOffset() {
    return tenants.values().stream().mapToLong(WalReader.Result::maxSourceOffset).max().orElse(-1);
  }

  /**
   * The lowest source (Kafka) offset that dropped data may have come from, over all tenants; empty
   * when nothing was dropped or the WAL records carry no source offset.
   */
  public OptionalLong firstDroppedSourceOffset() {
    return tenants.values().stream().mapToLong(WalReader.Result::firstDroppedSourceOffset).filter(o -> o >= 0)
        .min().stream().mapToObj(OptionalLong::of).findFirst().orElse(OptionalLong.empty());
  }
}
