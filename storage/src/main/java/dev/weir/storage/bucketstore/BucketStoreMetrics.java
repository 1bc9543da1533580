package dev.weir.storage.bucketstore;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Metrics of a {@link BucketStore}, on an injected registry: {@code weir_bucket_store_*}.
 *
 * <p>Thread-safe.
 */
public final class BucketStoreMetrics {
  private final MeterRegistry registry;
  final AtomicInteger blocksLoaded = new AtomicInteger();
  final AtomicLong lastSuccessfulSyncSeconds = new AtomicLong();
  final Counter syncs;
  final Counter syncFailures;
  final Counter blockLoads;
  final Counter blockLoadFailures;
  final Counter blockDrops;

  public BucketStoreMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("weir.bucket.store.blocks.loaded", blocksLoaded, AtomicInteger::get)
        .description("Blocks loaded (index header in memory) and served.").register(registry);
    Gauge.builder("weir.bucket.store.last.successful.sync.timestamp.seconds", lastSuccessfulSyncSeconds,
        AtomicLong::get).description("When the bucket was last listed successfully (Unix seconds; 0 before).")
        .register(registry);
    syncs = Counter.builder("weir.bucket.store.syncs").description("Bucket syncs run.").register(registry);
    syncFailures = Counter.builder("weir.bucket.store.sync.failures")
        .description("Bucket syncs that failed (the bucket could not be listed).").register(registry);
    blockLoads = Counter.builder("weir.bucket.store.block.loads").description("Blocks loaded.").register(registry);
    blockLoadFailures = Counter.builder("weir.bucket.store.block.load.failures")
        .description("Blocks that could not be loaded (unreadable meta.json or index); retried next sync.")
        .register(registry);
    blockDrops = Counter.builder("weir.bucket.store.block.drops")
        .description("Blocks dropped because they left the bucket (or were replaced).").register(registry);
  }

  void bucketRead(String file, long bytes) {
    String kind = file.startsWith("chunks/") ? "chunks" : file;
    Counter.builder("weir.bucket.store.bucket.read").baseUnit("bytes").tag("file", kind)
        .description("Bytes read from the bucket, by file (index, chunks, meta.json).").register(registry)
        .increment(bytes);
    Counter.builder("weir.bucket.store.bucket.reads").tag("file", kind)
        .description("Range reads from the bucket, by file.").register(registry).increment();
  }

  void indexHeader(String outcome) {
    Counter.builder("weir.bucket.store.index.header.cache").tag("outcome", outcome)
        .description("Index header lookups in the local cache: hit, missing, stale (block replaced) or corrupt"
            + " (rebuilt from the bucket).").register(registry).increment();
  }

  void queryRefused(String reason) {
    Counter.builder("weir.bucket.store.queries.refused").tag("reason", reason)
        .description("Queries refused by a limit, by reason.").register(registry).increment();
  }

  Timer queryDuration(String method) {
    return Timer.builder("weir.bucket.store.query.duration").tag("method", method)
        .description("Duration of bucket store queries, by method.").publishPercentileHistogram()
        .register(registry);
  }
}
