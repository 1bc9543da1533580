package dev.weir.storage.tsdb;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.progress.ProgressReporter;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalCorruptionException;
import dev.weir.storage.tsdb.wal.WalReader;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage of all tenants: one {@link TenantDb} (head, WAL, blocks) per tenant, created on its
 * first write, reopened (blocks loaded, WAL replayed) by {@link #open()}. Label strings are
 * interned across tenants. A background thread compacts heads into blocks and applies
 * retention; in {@link TsdbConfig.FsyncMode#INTERVAL} another fsyncs the WALs.
 *
 * <p>Thread-safe. {@link #open()} once before use, {@link #close()} at the end.
 */
public final class Tsdb implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Tsdb.class);

  private final TsdbConfig config;
  private final TsdbMetrics metrics;
  private final LongSupplier wallClock;
  private final Function<String, IntSupplier> seriesLimits;
  private final ConcurrentHashMap<String, TenantDb> tenants = new ConcurrentHashMap<>();
  private @Nullable ScheduledExecutorService background;
  private volatile boolean closing;
  private volatile RetentionGate retentionGate = RetentionGate.ALWAYS;
  private ReplayReport replayReport = new ReplayReport(java.util.Map.of());
  private volatile ProgressBoard progress = ProgressBoard.standard();
  private volatile Function<String, IntSupplier> exemplarLimits = tenant -> () -> 0;
  private volatile Function<String, LongSupplier> oooWindows = t -> () -> 0;
  private volatile EarlyCompaction early;

  /**
   * @param seriesLimits per tenant, the current maximum number of series (0: unlimited)
   */
  public Tsdb(TsdbConfig config, TsdbMetrics metrics, LongSupplier wallClock,
      Function<String, IntSupplier> seriesLimits) {
    this.config = config;
    this.metrics = metrics;
    this.wallClock = wallClock;
    this.seriesLimits = seriesLimits;
    this.early = new EarlyCompaction(EarlyCompaction.Config.OFF, metrics);
    Gauge.builder("weir.tsdb.head.memory.estimate.bytes", this, Tsdb::memoryEstimate)
        .description("Estimated heap bytes held by all heads: series objects, label strings, index, chunks.")
        .register(metrics.registry);
    Gauge.builder("weir.tsdb.blocks.loaded", this, t -> t.tenants.values().stream().mapToInt(d -> d.blocks().size()).sum())
        .description("Blocks open for queries.").register(metrics.registry);
    Gauge.builder("weir.tsdb.wal.size.bytes", this, Tsdb::walBytes)
        .description("Bytes on disk of every tenant's WAL (segments and checkpoints).").register(metrics.registry);
    Gauge.builder("weir.tsdb.wal.failed", this, Tsdb::failedWals)
        .description("WALs refusing writes after a failed fsync (the ingester is not ready; restart it).")
        .register(metrics.registry);
  }

  /** Bytes of the WAL directories of all open tenants (read from the file system). */
  public long walBytes() {
    long total = 0;
    for (String tenant : tenants.keySet()) {
      try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(config.walDir(tenant))) {
        total += files.filter(java.nio.file.Files::isRegularFile).mapToLong(f -> {
          try {
            return java.nio.file.Files.size(f);
          } catch (IOException e) {
            return 0; // deleted meanwhile (truncation)
          }
        }).sum();
      } catch (IOException | java.io.UncheckedIOException e) {
        // a tenant being created or deleted: counted next time
      }
    }
    return total;
  }

  /**
   * Per tenant, the current maximum number of exemplars kept in memory (0: none); set before
   * {@link #open()}. Without it no exemplar is stored.
   */
  public void exemplarLimits(Function<String, IntSupplier> limits) {
    this.exemplarLimits = limits;
  }

  /**
   * Where each tenant's out-of-order window (milliseconds, 0 = off) comes from; read at every
   * commit, so a runtime-config change applies at once. Set before {@link #open()}.
   */
  public void outOfOrderWindows(Function<String, LongSupplier> windows) {
    this.oooWindows = windows;
    for (TenantDb db : tenants.values()) {
      db.head().outOfOrderWindow(windows.apply(db.tenant()));
    }
  }

  /**
   * Turns on early head compaction ({@link EarlyCompaction}) with these thresholds; set before
   * {@link #open()}, which schedules the check.
   */
  public void earlyCompaction(EarlyCompaction.Config config) {
    this.early = new EarlyCompaction(config, metrics);
    Gauge.builder("weir.tsdb.head.memory.budget.bytes", config, EarlyCompaction.Config::memoryBudgetBytes)
        .description("Head memory estimate at which heads are compacted early (0: no memory budget).")
        .register(metrics.registry);
  }

  /**
   * Runs one early compaction check now, on the background thread (so it never overlaps a
   * compaction), and waits for it; what the periodic check does.
   *
   * @return how many tenant heads were compacted early
   * @throws IllegalStateException before {@link #open()}
   */
  public int compactEarlyIfOverThreshold() {
    ScheduledExecutorService bg = background;
    if (bg == null) {
      throw new IllegalStateException("the storage is not open");
    }
    try {
      return bg.submit(this::earlyCheck).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while compacting early", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new ServerErrorException("early compaction check failed: " + e.getCause(), e);
    }
  }

  private int earlyCheck() {
    return early.run(tenants.values(), () -> closing);
  }

  private void earlyCheckQuietly() {
    try {
      earlyCheck();
    } catch (RuntimeException | Error e) { // a periodic task that throws is never run again
      log.error("msg=\"early compaction check failed\" err=\"{}\"", e.toString());
    }
  }

  /** Where {@link #open()} reports the WAL replay's progress (bytes of all tenants' WALs). */
  public void progressBoard(ProgressBoard board) {
    this.progress = board;
  }

  /**
   * Moves a data directory of the old layout to the current one ({@link DataDirLayout#migrate}),
   * opens every tenant found on disk (blocks loaded, WAL replayed) and starts the background work.
   *
   * @throws WalCorruptionException when a WAL is corrupt in the middle and repair was turned off
   *     (by default it is repaired; see {@link #replayReport()})
   */
  public void open() throws IOException, WalCorruptionException {
    DataDirLayout.migrate(config.dataDir());
    TreeSet<String> found = new TreeSet<>();
    Path root = config.dataDir().resolve(DataDirLayout.TSDB_ROOT);
    if (Files.isDirectory(root)) {
      try (Stream<Path> s = Files.list(root)) {
        s.filter(Files::isDirectory).forEach(d -> found.add(d.getFileName().toString()));
      }
    }
    long t0 = System.nanoTime();
    int i = 0;
    java.util.Map<String, WalReader.Result> replays = new java.util.HashMap<>();
    long walBytes = 0;
    for (String tenant : found) {
      walBytes += WalReader.replayBytes(config.walDir(tenant));
    }
    @Nullable ProgressReporter replay = walBytes > 0
        ? progress.begin(log, "WAL replay", "tenants=" + found.size(), "bytes", walBytes) : null;
    for (String tenant : found) {
      TenantDb db = TenantDb.open(tenant, config, metrics, wallClock, seriesLimits.apply(tenant),
          exemplarLimits.apply(tenant), replay == null ? n -> {} : replay::add);
      db.head().outOfOrderWindow(oooWindows.apply(tenant));
      tenants.put(tenant, db);
      WalReader.Result r = db.replayResult();
      if (r != null) {
        replays.put(tenant, r);
      }
      i++;
      log.info("msg=\"tenant storage opened\" user={} tenants_done={}/{}", tenant, i, found.size());
    }
    if (replay != null) {
      replay.finish();
    }
    replayReport = new ReplayReport(replays);
    if (replayReport.repairedCorruption()) {
      log.error("msg=\"WAL corruption repaired at start-up: data after the corruption is lost\" tenants={}"
          + " dropped_records={} dropped_bytes={} dropped_segments={} first_dropped_source_offset={}",
          replayReport.corruptionRepairedTenants(), replayReport.droppedRecords(), replayReport.droppedBytes(),
          replayReport.droppedSegments(), replayReport.firstDroppedSourceOffset());
    }
    if (!found.isEmpty()) {
      log.info("msg=\"storage opened\" tenants={} seconds={}", found.size(),
          String.format("%.2f", (System.nanoTime() - t0) / 1e9));
    }
    ScheduledExecutorService bg = Executors.newScheduledThreadPool(1, r -> {
      Thread t = new Thread(r, "tsdb-background");
      t.setDaemon(true);
      return t;
    });
    long every = Math.max(1, config.compactionInterval().toMillis());
    bg.scheduleWithFixedDelay(this::compactAll, every, every, TimeUnit.MILLISECONDS);
    EarlyCompaction.Config ec = early.config();
    if (ec.enabled()) {
      long check = Math.max(1, ec.checkInterval().toMillis());
      bg.scheduleWithFixedDelay(this::earlyCheckQuietly, check, check, TimeUnit.MILLISECONDS);
    }
    if (config.fsync() == TsdbConfig.FsyncMode.INTERVAL) {
      long f = Math.max(1, config.fsyncInterval().toMillis());
      bg.scheduleWithFixedDelay(this::syncQuietly, f, f, TimeUnit.MILLISECONDS);
    }
    background = bg;
  }

  /**
   * Makes retention delete a block past the retention period only when {@code gate} allows it
   * (the shipper's gate: only once the block is in the bucket). Call before {@link #open()};
   * without it retention deletes every block past the period.
   */
  public void retentionGate(RetentionGate gate) {
    this.retentionGate = gate;
  }

  /**
   * What replaying the WALs in {@link #open()} found: repairs, dropped records/bytes/segments and
   * the lowest source offset of dropped data (for a Kafka consumer to re-read from).
   */
  public ReplayReport replayReport() {
    return replayReport;
  }

  /**
   * The tenant's storage, created (with an empty WAL) on first use.
   *
   * @throws dev.weir.storage.errors.ClientErrorException ({@code invalid_tenant}) for a tenant that
   *     cannot name a directory of its own (see {@link TenantPaths})
   */
  public TenantDb tenant(String tenant) {
    TenantDb db = tenants.get(tenant);
    if (db != null) {
      return db;
    }
    config.blocksDir(tenant); // refuses a tenant that would name a directory outside its root
    return tenants.computeIfAbsent(tenant, t -> {
      try {
        TenantDb created = TenantDb.open(t, config, metrics, wallClock, seriesLimits.apply(t),
            exemplarLimits.apply(t), n -> {});
        created.head().outOfOrderWindow(oooWindows.apply(t));
        return created;
      } catch (IOException e) {
        throw new ServerErrorException("cannot create storage for tenant " + t + ": " + e.getMessage(), e);
      } catch (WalCorruptionException e) {
        throw new ServerErrorException(e.getMessage(), e);
      }
    });
  }

  /** The head of a tenant, created when missing. */
  public TenantHead head(String tenant) {
    return tenant(tenant).head();
  }

  /** The tenant's storage, or null when it never wrote. */
  public @Nullable TenantDb existing(String tenant) {
    return tenants.get(tenant);
  }

  /** Tenants with storage, sorted. */
  public List<String> tenants() {
    List<String> out = new ArrayList<>(tenants.keySet());
    Collections.sort(out);
    return out;
  }

  public TsdbConfig config() {
    return config;
  }

  /** Whether acknowledged writes wait for the WAL fsync. */
  public boolean fsyncOnCommit() {
    return config.fsync() == TsdbConfig.FsyncMode.ALWAYS;
  }

  /**
   * Makes everything appended so far durable in every tenant's WAL (the Kafka reader calls this
   * before committing an offset).
   *
   * @throws ServerErrorException when a WAL cannot be fsynced
   */
  public void sync() {
    for (TenantDb db : tenants.values()) {
      Wal w = db.wal();
      if (w != null) {
        w.sync();
      }
      Wal o = db.wbl(); // the out-of-order write-behind log: durable before a Kafka commit too
      if (o != null) {
        o.sync();
      }
    }
  }

  private void syncQuietly() {
    try {
      sync();
    } catch (RuntimeException e) {
      log.error("msg=\"background WAL fsync failed\" err=\"{}\"", e.toString());
    }
  }

  /** Runs compaction and retention for every tenant now (also runs periodically). */
  public void compactAll() {
    for (TenantDb db : tenants.values()) {
      if (closing) {
        return;
      }
      try {
        db.compact();
        db.applyRetention(retentionGate);
      } catch (IOException | WalCorruptionException | RuntimeException e) {
        metrics.compactionsFailed.increment();
        log.error("msg=\"compaction failed, retrying at the next interval\" user={} err=\"{}\"", db.tenant(),
            e.toString());
      }
    }
  }

  /**
   * Compacts every tenant's whole head into blocks now, on the background thread that also runs
   * the periodic compaction (so the two never overlap), and waits for it. For an ingester that
   * takes no more samples (an INACTIVE partition being scaled in): afterwards samples older than
   * the end of the last block are refused as out of bounds.
   *
   * @return blocks written
   * @throws ServerErrorException when a compaction failed (blocks written before it stay)
   * @throws IllegalStateException before {@link #open()}
   */
  public int flushAll() {
    ScheduledExecutorService bg = background;
    if (bg == null) {
      throw new IllegalStateException("the storage is not open");
    }
    try {
      return bg.submit(() -> {
        int written = 0;
        for (TenantDb db : tenants.values()) {
          written += db.compact(true);
        }
        log.info("msg=\"heads flushed into blocks\" blocks={}", written);
        return written;
      }).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerErrorException("interrupted while flushing the heads", e);
    } catch (java.util.concurrent.ExecutionException e) {
      metrics.compactionsFailed.increment();
      throw new ServerErrorException("flushing the heads failed: " + e.getCause(), e);
    }
  }

  /**
   * Why writes cannot succeed: the first WAL (by tenant) in the failed state after a failed or
   * interrupted fsync, or null. The state is sticky until restart; readiness reports it.
   */
  public @Nullable String walFailure() {
    for (String tenant : tenants()) {
      TenantDb db = tenants.get(tenant);
      Wal w = db == null ? null : db.wal();
      String f = w == null ? null : w.failure();
      if (f != null) {
        return "WAL of tenant " + tenant + " failed: " + f + " (restart once the disk is healthy)";
      }
      Wal o = db == null ? null : db.wbl();
      f = o == null ? null : o.failure();
      if (f != null) {
        return "WBL (out-of-order write-behind log) of tenant " + tenant + " failed: " + f
            + " (restart once the disk is healthy)";
      }
    }
    return null;
  }

  /**
   * The storage's reason for /ready to fail: {@link #walFailure()}, else the first tenant whose
   * head index failed to build after its replay (its queries fail; restart), else null.
   */
  public @Nullable String notReadyReason() {
    String wal = walFailure();
    if (wal != null) {
      return wal;
    }
    for (String tenant : tenants()) {
      TenantDb db = tenants.get(tenant);
      String f = db == null ? null : db.head().indexFailure();
      if (f != null) {
        return "head of tenant " + tenant + ": " + f + " (queries of the tenant fail; restart)";
      }
    }
    return null;
  }

  /** Number of tenants whose WAL is in the failed state. */
  public int failedWals() {
    int n = 0;
    for (TenantDb db : tenants.values()) {
      Wal w = db.wal();
      Wal o = db.wbl();
      if ((w != null && w.failure() != null) || (o != null && o.failure() != null)) {
        n++;
      }
    }
    return n;
  }

  /** Estimated heap bytes of all heads, their label strings included (each head's postings hold them). */
  public long memoryEstimate() {
    long n = 0;
    for (TenantDb db : tenants.values()) {
      n += db.head().memoryBytesEstimate();
    }
    return n;
  }

  /**
   * Stops the background work (without interrupting it: an interrupt would close a WAL segment in
   * the middle of an fsync), then closes every tenant, each even when another fails.
   *
   * @throws UncheckedIOException after all tenants were closed, when some failed (the others are
   *     suppressed exceptions of the first)
   */
  @Override
  public void close() {
    closing = true;
    ScheduledExecutorService bg = background;
    if (bg != null) {
      bg.shutdown(); // periodic tasks are cancelled; a running compaction or fsync finishes
      try {
        if (!bg.awaitTermination(60, TimeUnit.SECONDS)) {
          log.warn("msg=\"background storage work still running after 60s; closing the WALs anyway\"");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    UncheckedIOException failed = null;
    for (String tenant : tenants()) {
      TenantDb db = tenants.get(tenant);
      if (db == null) {
        continue;
      }
      try {
        db.close();
      } catch (IOException | RuntimeException e) {
        log.error("msg=\"closing tenant storage failed\" user={} err=\"{}\"", tenant, e.toString());
        UncheckedIOException u = new UncheckedIOException("closing storage of tenant " + tenant,
            e instanceof IOException io ? io : new IOException(e));
        if (failed == null) {
          failed = u;
        } else {
          failed.addSuppressed(u);
        }
      }
    }
    if (failed != null) {
      throw failed;
    }
  }
}
