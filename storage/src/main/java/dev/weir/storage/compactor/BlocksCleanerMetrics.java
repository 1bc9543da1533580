package dev.weir.storage.compactor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Metrics of a {@link BlocksCleaner}, on an injected registry: {@code weir_compactor_*}, named
 * after Mimir's {@code cortex_compactor_*}.
 *
 * <p>Thread-safe.
 */
public final class BlocksCleanerMetrics {
  final Counter runsStarted;
  final Counter runsCompleted;
  final Counter runsFailed;
  final Counter blocksMarked;
  final Counter blocksCleaned;
  final Counter blockFailures;
  final AtomicLong lastSuccessfulRunSeconds = new AtomicLong();

  public BlocksCleanerMetrics(MeterRegistry registry) {
    runsStarted = Counter.builder("weir.compactor.block.cleanup.started")
        .description("Bucket cleanup runs started.").register(registry);
    runsCompleted = Counter.builder("weir.compactor.block.cleanup.completed")
        .description("Bucket cleanup runs that visited every block without an error.").register(registry);
    runsFailed = Counter.builder("weir.compactor.block.cleanup.failed")
        .description("Bucket cleanup runs with an error (the bucket could not be listed, or a block failed).")
        .register(registry);
    blocksMarked = Counter.builder("weir.compactor.blocks.marked.for.deletion").tag("reason", "retention")
        .description("Blocks marked for deletion (deletion-mark.json written), by reason.").register(registry);
    blocksCleaned = Counter.builder("weir.compactor.blocks.cleaned")
        .description("Blocks deleted from the bucket after the deletion delay (or whose cut-short deletion was"
            + " finished).").register(registry);
    blockFailures = Counter.builder("weir.compactor.block.cleanup.failures")
        .description("Blocks that could not be marked or deleted; tried again at the next run.").register(registry);
    Gauge.builder("weir.compactor.block.cleanup.last.successful.run.timestamp.seconds", lastSuccessfulRunSeconds,
        AtomicLong::get).description("When a cleanup run last completed without an error (Unix seconds; 0 before).")
        .register(registry);
  }
}
