package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.wal.WalMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** Metrics of the storage: compactions, blocks, retention, replay; plus the WAL's. Thread-safe. */
public final class TsdbMetrics {
  final MeterRegistry registry;
  final WalMetrics wal;
  final Counter compactions;
  final Counter compactionsFailed;
  final Counter blocksDeleted;
  final Counter checkpointsFailed;
  final Counter samplesReplayed;
  final Counter oooCompactions;
  final Counter earlyCompactions;
  final Counter earlyCompactionRemovedSeries;
  final Counter earlyCompactionsSkipped;

  public TsdbMetrics(MeterRegistry r) {
    registry = r;
    wal = new WalMetrics(r);
    compactions = Counter.builder("weir.tsdb.compactions")
        .description("Head ranges written to blocks.").register(r);
    compactionsFailed = Counter.builder("weir.tsdb.compactions.failed")
        .description("Head compactions that failed (retried at the next interval).").register(r);
    blocksDeleted = Counter.builder("weir.tsdb.blocks.deleted.retention")
        .description("Blocks deleted because they fell out of the retention period.").register(r);
    checkpointsFailed = Counter.builder("weir.tsdb.checkpoints.failed")
        .description("WAL checkpoints that failed (the WAL keeps its segments; retried next compaction).")
        .register(r);
    samplesReplayed = Counter.builder("weir.tsdb.replayed.samples")
        .description("Samples restored into heads from WAL and checkpoints at start-up.").register(r);
    oooCompactions = Counter.builder("weir.tsdb.out.of.order.compactions")
        .description("Blocks written from out-of-order samples (one per block range they fell in).").register(r);
    earlyCompactions = Counter.builder("weir.tsdb.early.head.compactions")
        .description("Tenant heads compacted early because the heads passed the series threshold or memory budget"
            + " (blocks-storage.tsdb.early-head-compaction-*).").register(r);
    earlyCompactionRemovedSeries = Counter.builder("weir.tsdb.early.head.compaction.removed.series")
        .description("Series removed from heads by early compactions.").register(r);
    earlyCompactionsSkipped = Counter.builder("weir.tsdb.early.head.compactions.skipped")
        .description("Checks that found the heads over the early compaction threshold with nothing worth compacting"
            + " (what they hold is younger than the out-of-bounds limit).").register(r);
    io.micrometer.core.instrument.Gauge.builder("weir.tsdb.label.dictionary.entries",
            dev.weir.storage.tsdb.labels.LabelNames::size)
        .tag("kind", "names")
        .description("Label names (kind=names) or values (kind=values) the process' dictionaries hold, which head"
            + " series store as numbers (at most 16,383 names and 131,072 values; never forgotten).").register(r);
    io.micrometer.core.instrument.Gauge.builder("weir.tsdb.label.dictionary.entries",
            dev.weir.storage.tsdb.labels.LabelValues::size)
        .tag("kind", "values")
        .description("Label names (kind=names) or values (kind=values) the process' dictionaries hold, which head"
            + " series store as numbers (at most 16,383 names and 131,072 values; never forgotten).").register(r);
    io.micrometer.core.instrument.Gauge.builder("weir.tsdb.label.value.dictionary.bytes",
            dev.weir.storage.tsdb.labels.LabelValues::bytesEstimate)
        .description("Estimated heap bytes of the process' label value dictionary (tables and values).")
        .baseUnit("bytes").register(r);
  }

  public static TsdbMetrics noop() {
    return new TsdbMetrics(new SimpleMeterRegistry());
  }
}
