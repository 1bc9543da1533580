package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.wal.Wal;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link TenantHead} is built with besides its config.
 *
 * @param wallClock milliseconds, for the active-series count
 * @param wal the tenant's WAL, or null: then one is attached after replay, or never (tests,
 *     block building)
 * @param maxSeries current series limit of the tenant; 0 means unlimited
 */
public record HeadOptions(LongSupplier wallClock, @Nullable Wal wal, IntSupplier maxSeries) {
  /** A head without WAL or limit. */
  public static HeadOptions inMemory(LongSupplier wallClock) {
    return new HeadOptions(wallClock, null, () -> 0);
  }
}
