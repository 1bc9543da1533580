package dev.weir.storage.tsdb.wal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;

/**
 * WAL metrics, shared by the WALs of all tenants (like Prometheus' {@code prometheus_tsdb_wal_*}).
 * Thread-safe.
 */
public final class WalMetrics {
  final Counter writesFailed;
  final Counter fsyncsFailed;
  final Timer fsyncDuration;
  final Counter bytesWritten;
  final Counter tailRepairs;
  final Counter corruptionRepairs;
  final Counter truncatedBytes;
  final Counter corruptions;
  final Counter droppedRecords;
  final Counter droppedSegments;
  final Counter recordsReplayed;
  final Counter unknownRefs;

  public WalMetrics(MeterRegistry r) {
    writesFailed = Counter.builder("weir.tsdb.wal.writes.failed")
        .description("WAL writes that failed (the push got a server error; nothing was applied).").register(r);
    fsyncsFailed = Counter.builder("weir.tsdb.wal.fsyncs.failed")
        .description("WAL fsyncs that failed; the WAL refuses writes until restart.").register(r);
    fsyncDuration = Timer.builder("weir.tsdb.wal.fsync.duration")
        .description("Duration of WAL fsyncs.")
        .serviceLevelObjectives(Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(25),
            Duration.ofMillis(100), Duration.ofMillis(500), Duration.ofSeconds(2))
        .register(r);
    bytesWritten = Counter.builder("weir.tsdb.wal.written.bytes")
        .description("Bytes written to WAL segments.").register(r);
    tailRepairs = Counter.builder("weir.tsdb.wal.tail.repairs")
        .description("Torn or corrupt WAL tails truncated at the last good record during replay.").register(r);
    corruptionRepairs = Counter.builder("weir.tsdb.wal.corruption.repairs")
        .description("WALs corrupt in the middle that were truncated at the corruption (wal-repair, the default).")
        .register(r);
    corruptions = Counter.builder("weir.tsdb.wal.corruptions")
        .description("WAL corruptions found in the middle of the WAL at replay (valid records after the damage),"
            + " repaired or not.").register(r);
    droppedRecords = Counter.builder("weir.tsdb.wal.repair.dropped.records")
        .description("Intact WAL records after a corruption that the repair dropped (their data is lost).")
        .register(r);
    droppedSegments = Counter.builder("weir.tsdb.wal.repair.dropped.segments")
        .description("WAL segments after a corrupt one that the repair deleted.").register(r);
    truncatedBytes = Counter.builder("weir.tsdb.wal.truncated.bytes")
        .description("Bytes dropped from WAL segments by repairs.").register(r);
    recordsReplayed = Counter.builder("weir.tsdb.wal.replayed.records")
        .description("WAL and checkpoint records replayed at start-up.").register(r);
    unknownRefs = Counter.builder("weir.tsdb.wal.replay.unknown.refs")
        .description("Samples in the WAL whose series record was missing (skipped at replay).").register(r);
  }

  /** Metrics registered nowhere visible (tests, tools). */
  public static WalMetrics noop() {
    return new WalMetrics(new SimpleMeterRegistry());
  }
}
