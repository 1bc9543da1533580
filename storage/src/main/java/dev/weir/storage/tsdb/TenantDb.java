package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.HeadOptions;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.labels.Utf8Order;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.PipelinedVisitor;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalCorruptionException;
import dev.weir.storage.tsdb.wal.WalReader;
import dev.weir.storage.tsdb.wal.WalRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One tenant's storage: its head, its WAL and its blocks. Queries merge blocks and head.
 *
 * <p>Compaction writes the head's oldest complete block range to a block once the head spans
 * more than 1.5 ranges (by then the out-of-bounds rule refuses samples for that range), truncates
 * the head, and checkpoints the WAL so replay stays bounded.
 *
 * <p>Thread-safe. Compaction and retention run on the storage's single background thread.
 */
public final class TenantDb {
  private static final Logger log = LoggerFactory.getLogger(TenantDb.class);

  /**
   * The {@code weir.source} that head compaction writes into its blocks' meta.json (a
   * block-builder writes {@code "block-builder"}), so a shipper and readers of the bucket can
   * tell where a block came from.
   */
  public static final String HEAD_BLOCK_SOURCE = "ingester";
  private static final String HEAD_BLOCK_META = "\"weir\": {\"source\": \"" + HEAD_BLOCK_SOURCE + "\"}";
  /**
   * Early blocks are also marked {@code outOfOrder}: releases before early compaction leave such
   * blocks out of the head's lower bound at start-up too, so a rollback does not skip the samples
   * the head kept from the early block's range.
   */
  private static final String EARLY_BLOCK_META = "\"weir\": {\"source\": \"" + HEAD_BLOCK_SOURCE
      + "\", \"earlyCompaction\": true, \"outOfOrder\": true}";

  private final String tenant;
  private final TsdbConfig config;
  private final TsdbMetrics metrics;
  private final LongSupplier wallClock;
  private final TenantHead head;
  private final CopyOnWriteArrayList<Block> blocks = new CopyOnWriteArrayList<>();
  /** Blocks past retention that the gate kept; each is logged once. Background thread only. */
  private final java.util.Set<String> keptPastRetention = new java.util.HashSet<>();
  private @Nullable Wal wal;
  private WalReader.@Nullable Result replay;

  private TenantDb(String tenant, TsdbConfig config, TsdbMetrics metrics, LongSupplier wallClock, TenantHead head) {
    this.tenant = tenant;
    this.config = config;
    this.metrics = metrics;
    this.wallClock = wallClock;
    this.head = head;
  }

  /** Opens (or creates) a tenant: loads its blocks, replays its WAL, then opens it for writing. */
  static TenantDb open(String tenant, TsdbConfig config, TsdbMetrics metrics,
      LongSupplier wallClock, IntSupplier maxSeries) throws IOException, WalCorruptionException {
    return open(tenant, config, metrics, wallClock, maxSeries, bytes -> {});
  }

  /** As the method above, telling {@code replayed} the bytes of each WAL record replayed. */
  static TenantDb open(String tenant, TsdbConfig config, TsdbMetrics metrics,
      LongSupplier wallClock, IntSupplier maxSeries, LongConsumer replayed) throws IOException, WalCorruptionException {
    return open(tenant, config, metrics, wallClock, maxSeries, () -> 0, replayed);
  }

  /** As above, with the tenant's exemplar limit ({@link TenantHead#exemplars()}). */
  static TenantDb open(String tenant, TsdbConfig config, TsdbMetrics metrics,
      LongSupplier wallClock, IntSupplier maxSeries, IntSupplier maxExemplars, LongConsumer replayed)
      throws IOException, WalCorruptionException {
    TenantHead head = new TenantHead(tenant, config.head(), new HeadOptions(wallClock, null, maxSeries));
    head.exemplars().limit(maxExemplars);
    TenantDb db = new TenantDb(tenant, config, metrics, wallClock, head);
    db.loadBlocks();
    db.loadBlockMetadata();
    // Blocks of out-of-order samples may reach into the head's range: they do not bound it (Prometheus).
    // So may blocks of an early compaction: the head kept samples older than their end.
    long blocksEnd = db.blocks.stream().filter(TenantDb::boundsHead)
        .mapToLong(b -> b.meta().maxTime()).max().orElse(Long.MIN_VALUE);
    head.setMinValidTime(blocksEnd);
    long t0 = System.nanoTime();
    AtomicLong samples = new AtomicLong();
    AtomicLong unknown = new AtomicLong();
    boolean concurrent = PipelinedVisitor.worthIt();
    head.beginReplay();
    db.replayInto(samples, unknown, replayed, concurrent, t0);
    return db;
  }

  /** Replays the WAL and the WBL into the head, then opens both logs for writing. */
  private void replayInto(AtomicLong samples, AtomicLong unknown, LongConsumer replayed, boolean concurrent,
      long t0) throws IOException, WalCorruptionException {
    WalRecords.Visitor intoHead = new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        head.replaySeries(ref, labels);
      }

      @Override
      public boolean acceptsEncodedSeries() {
        return true; // the head keeps a series' labels as these bytes: no String on the way
      }

      @Override
      public void seriesEncoded(int ref, byte[] compact, int hash) {
        // Values stay in full during the replay; the index build gives them numbers afterwards.
        head.replaySeries(ref, compact, hash);
      }

      @Override
      public void sample(int ref, long t, double v) {
        if (head.replaySample(ref, t, v)) {
          samples.incrementAndGet();
        } else {
          unknown.incrementAndGet();
        }
      }

      @Override
      public void histogram(int ref, long t, dev.weir.storage.tsdb.chunk.NativeHistogram h) {
        if (head.replayHistogram(ref, t, h)) {
          samples.incrementAndGet();
        } else {
          unknown.incrementAndGet();
        }
      }

      @Override
      public void exemplar(int ref, long t, double v, Labels labels) {
        head.exemplars().replay(ref, t, v, labels);
      }

      @Override
      public void metadata(dev.weir.storage.tsdb.wal.MetadataRecords.Entry entry) {
        head.metadata().replay(entry);
      }

      @Override
      public void recordRead(int bytes) {
        replayed.accept(bytes);
      }
    };
    WalReader.Result r;
    if (concurrent) {
      // Records are read and decoded on this thread (series records straight into the labels'
      // compact bytes the head keeps, or labels it encodes when a string is not ASCII) while
      // another one applies them to the head.
      try (PipelinedVisitor pipelined = new PipelinedVisitor(intoHead, "wal-replay-" + tenant,
          Labels::withWireEncoding)) {
        r = WalReader.replay(config.walDir(tenant), pipelined, config.walRepair(), metrics.wal, tenant);
        pipelined.finish();
      }
    } else {
      r = WalReader.replay(config.walDir(tenant), intoHead, config.walRepair(), metrics.wal, tenant);
    }
    Wal wbl = replayWbl(samples, unknown);
    head.finishReplay();
    metrics.samplesReplayed.increment(samples.get());
    if (unknown.get() > 0) {
      log.warn("msg=\"WAL samples without series record skipped\" user={} samples={}", tenant, unknown.get());
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    if (r.records() > 0) {
      log.info("msg=\"WAL replayed\" user={} segments={} series={} samples={} seconds={} samples_per_s={}",
          tenant, r.segments(), head.numSeries(), samples.get(), String.format("%.2f", secs),
          String.format("%.0f", samples.get() / Math.max(secs, 1e-9)));
    }
    Wal w = Wal.open(config.walDir(tenant), config.walSegmentBytes(), config.channelOpener(), metrics.wal, tenant);
    wal = w;
    replay = r;
    head.attachWal(w);
    head.attachWbl(() -> Wal.open(config.wblDir(tenant), config.walSegmentBytes(), config.channelOpener(),
        metrics.wal, tenant), wbl);
  }

  /**
   * Replays the write-behind log, after the WAL (whose series records its samples use), into the
   * out-of-order head; returns it opened for appending, or null when the tenant has none.
   */
  private @Nullable Wal replayWbl(AtomicLong samples, AtomicLong unknown) throws IOException, WalCorruptionException {
    Path dir = config.wblDir(tenant);
    if (!Files.isDirectory(dir)) {
      return null;
    }
    AtomicLong ooo = new AtomicLong();
    WalReader.replay(dir, new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        // the WBL holds samples only; series records are in the WAL
      }

      @Override
      public void sample(int ref, long t, double v) {
        if (head.replayOooSample(ref, t, v)) {
          ooo.incrementAndGet();
        } else {
          unknown.incrementAndGet();
        }
      }
    }, config.walRepair(), metrics.wal, tenant);
    samples.addAndGet(ooo.get());
    if (ooo.get() > 0) {
      log.info("msg=\"WBL replayed\" user={} out_of_order_samples={}", tenant, ooo.get());
    }
    Wal w = Wal.open(dir, config.walSegmentBytes(), config.channelOpener(), metrics.wal, tenant);
    return w;
  }

  /** The write-behind log, or null while the tenant has no out-of-order sample. */
  public @Nullable Wal wbl() {
    return head.wbl();
  }

  private void loadBlocks() throws IOException {
    Path dir = config.blocksDir(tenant);
    if (!Files.isDirectory(dir)) {
      return;
    }
    List<Path> dirs;
    try (Stream<Path> s = Files.list(dir)) {
      dirs = s.toList();
    }
    for (Path p : dirs) {
      String name = p.getFileName().toString();
      if (name.endsWith(".tmp")) {
        BlockWriter.deleteRecursively(p); // a compaction that crashed before its rename
      } else if (Ulid.isUlid(name) && Files.exists(p.resolve("meta.json"))) {
        blocks.add(Block.open(p));
      }
    }
    blocks.sort(Comparator.comparingLong(b -> b.meta().minTime()));
  }

  /** Metadata of the blocks' side files, oldest block first, so a newer block's entry wins. */
  private void loadBlockMetadata() {
    for (Block b : blocks) {
      try {
        head.metadata().load(MetadataFile.read(b.dir()));
      } catch (IOException | RuntimeException e) {
        log.warn("msg=\"block metadata side file unreadable, skipped\" user={} block={} err=\"{}\"", tenant,
            b.meta().ulid(), e.toString());
      }
    }
  }

  public String tenant() {
    return tenant;
  }

  public TenantHead head() {
    return head;
  }

  public @Nullable Wal wal() {
    return wal;
  }

  /** What the WAL replay at open found and repaired. */
  public WalReader.@Nullable Result replayResult() {
    return replay;
  }

  public List<Block> blocks() {
    return List.copyOf(blocks);
  }

  /** Compacts every complete range it can; returns how many blocks it wrote. */
  int compact() throws IOException, WalCorruptionException {
    return compact(false);
  }

  /**
   * Compacts every complete range it can or, with {@code flush}, every range down to an empty
   * head (Mimir's flush: for an ingester that takes no more samples, since samples older than the
   * end of the last compacted range are refused afterwards); returns how many blocks it wrote.
   */
  int compact(boolean flush) throws IOException, WalCorruptionException {
    long range = config.head().chunkRangeMillis();
    int written = 0;
    long lastStart = Long.MIN_VALUE;
    while (true) {
      long min = head.minTime();
      long max = head.maxTime();
      if (min == Long.MAX_VALUE) {
        break;
      }
      long start = Math.floorDiv(min, range) * range;
      long end = start + range;
      if (flush ? start <= lastStart : max < end + range / 2) {
        break; // flush: a chunk across the range end kept the head from advancing
      }
      lastStart = start;
      List<SeriesChunks> data = new ArrayList<>();
      for (SeriesChunks s : head.selectInOrder(start, end - 1)) {
        List<ChunkData> inRange = new ArrayList<>();
        for (ChunkData c : s.chunks()) {
          if (c.minTime() >= start && c.maxTime() < end) {
            inRange.add(c);
          }
        }
        if (!inRange.isEmpty()) {
          data.add(new SeriesChunks(s.labels(), inRange));
        }
      }
      if (!data.isEmpty()) {
        String ulid = Ulid.random(wallClock.getAsLong());
        BlockWriter.write(config.blocksDir(tenant), ulid, start, end, data, HEAD_BLOCK_META);
        writeMetadataFile(config.blocksDir(tenant).resolve(ulid), data);
        Block b = Block.open(config.blocksDir(tenant).resolve(ulid));
        blocks.add(b);
        blocks.sort(Comparator.comparingLong(x -> x.meta().minTime()));
        log.info("msg=\"head compacted into block\" user={} block={} min_time={} max_time={} series={} samples={}",
            tenant, ulid, start, end, b.meta().numSeries(), b.meta().numSamples());
        written++;
        metrics.compactions.increment();
      }
      int removed = head.truncate(end);
      checkpoint(end, removed);
    }
    if (written > 0 || flush) {
      written += OooCompaction.run(this, head, config, wallClock, metrics);
    }
    return written;
  }

  /** What an early compaction of one tenant did. */
  record EarlyResult(int blocks, int removedSeries) {
    static final EarlyResult NONE = new EarlyResult(0, 0);
  }

  /**
   * The oldest time the head still accepts in order, where an early compaction cuts: half a
   * block range before the newest sample (older samples are refused as out of bounds already),
   * or {@code Long.MIN_VALUE} for an empty head.
   */
  long earlyCompactionTime() {
    long max = head.maxTime();
    return max == Long.MIN_VALUE ? Long.MIN_VALUE : Math.max(head.minValidTime(),
        max - config.head().chunkRangeMillis() / 2);
  }

  /**
   * Early head compaction (Mimir's, for an ingester whose heads pass a memory budget): after the
   * complete ranges, writes every in-order chunk whose samples are all older than
   * {@link #earlyCompactionTime()} into one block, drops those chunks from the head (series left
   * without samples go) and checkpoints the WAL per series. It refuses no sample the head would
   * have accepted: the cut is at or below the out-of-bounds limit. The block carries
   * {@code weir.earlyCompaction} in meta.json so that at start-up it does not raise the head's
   * minimum valid time (the head kept the younger chunks of the same range). A crash between the
   * block and the checkpoint replays those samples into the head again; queries return each
   * sample once.
   */
  EarlyResult compactEarly() throws IOException, WalCorruptionException {
    compact();
    long before = earlyCompactionTime();
    long min = head.minTime();
    if (min == Long.MAX_VALUE || before <= min) {
      return EarlyResult.NONE;
    }
    List<SeriesChunks> data = head.chunksBefore(before);
    if (data.isEmpty()) {
      return EarlyResult.NONE;
    }
    long dataMin = Long.MAX_VALUE;
    for (SeriesChunks sc : data) {
      dataMin = Math.min(dataMin, sc.chunks().get(0).minTime());
    }
    String ulid = Ulid.random(wallClock.getAsLong());
    try {
      BlockWriter.write(config.blocksDir(tenant), ulid, dataMin, before, data, EARLY_BLOCK_META);
    } catch (IOException | RuntimeException e) {
      // retried at every check: a full disk must not fill up with the remains of each attempt
      BlockWriter.deleteRecursively(config.blocksDir(tenant).resolve(ulid + ".tmp"));
      throw e;
    }
    writeMetadataFile(config.blocksDir(tenant).resolve(ulid), data);
    Block b = Block.open(config.blocksDir(tenant).resolve(ulid));
    addBlock(b);
    log.info("msg=\"head compacted early into block\" user={} block={} min_time={} max_time={} series={} samples={}",
        tenant, ulid, dataMin, before, b.meta().numSeries(), b.meta().numSamples());
    int removed = head.truncate(before);
    // No time floor: each live series' samples are kept from the oldest one the head still holds
    // (heldFrom), which can be older than the head's minimum valid time. A series that fell silent
    // and came back in the same chunk range appended to its open head chunk, so that chunk reaches
    // back past the cuts of earlier early compactions and is still in the head, not in a block.
    checkpoint(Long.MIN_VALUE, removed);
    // Series kept only by out-of-order samples leave too once those are in blocks.
    OooCompaction.run(this, head, config, wallClock, metrics);
    return new EarlyResult(1, removed);
  }

  /** Whether an early compaction wrote the block ({@code weir.earlyCompaction} in meta.json). */
  static boolean isEarlyBlock(Block b) {
    try {
      return "true".equals(WeirMeta.value(b.dir(), "earlyCompaction"));
    } catch (IOException e) {
      return false; // Block.open read it already; a block it cannot read is not one of ours
    }
  }

  /**
   * Whether the block's end bounds the head at start-up: a block of head compaction does, an
   * out-of-order or early block does not. When meta.json cannot be read now it does not: the
   * replay then keeps samples a block may hold too (duplicates, which readers merge) rather than
   * skip samples no block holds.
   */
  private static boolean boundsHead(Block b) {
    try {
      return !"true".equals(WeirMeta.value(b.dir(), "outOfOrder"))
          && !"true".equals(WeirMeta.value(b.dir(), "earlyCompaction"));
    } catch (IOException e) {
      log.warn("msg=\"block meta.json unreadable at start-up; the block does not bound the head\" block={} err=\"{}\"",
          b.dir(), e.toString());
      return false;
    }
  }

  /** The side file of the metadata of the block's families; a failure costs the file, not the block. */
  private void writeMetadataFile(Path blockDir, List<SeriesChunks> data) {
    java.util.Set<String> names = new java.util.HashSet<>();
    for (SeriesChunks s : data) {
      names.add(s.labels().getOrEmpty(Labels.METRIC_NAME));
    }
    try {
      MetadataFile.write(blockDir, head.metadata().forNames(names::contains));
    } catch (IOException e) {
      log.warn("msg=\"block metadata side file not written\" user={} block={} err=\"{}\"", tenant,
          blockDir.getFileName(), e.toString());
    }
  }

  /** Adds a block that a compaction wrote into this tenant's directory. */
  void addBlock(Block b) {
    blocks.add(b);
    blocks.sort(Comparator.comparingLong(x -> x.meta().minTime()));
  }

  private void checkpoint(long minTime, int removedSeries) {
    Wal w = wal;
    if (w == null) {
      return;
    }
    try {
      int last = w.roll();
      Checkpoint.create(config.walDir(tenant), last, head::isLive, head::heldFrom, minTime, metrics.wal, tenant, sink -> {
        head.metadata().writeLive(sink);
        head.exemplars().writeLive(sink);
      });
      log.info("msg=\"WAL checkpointed\" user={} through_segment={} removed_series={}", tenant, last, removedSeries);
    } catch (IOException | WalCorruptionException e) {
      metrics.checkpointsFailed.increment();
      log.warn("msg=\"WAL checkpoint failed; segments kept, retried after the next compaction\" user={} err=\"{}\"",
          tenant, e.toString());
    }
  }

  /**
   * Deletes blocks entirely older than the newest data minus the retention, each only when
   * {@code gate} allows it (a shipper keeps a block until it is in the bucket).
   */
  void applyRetention(RetentionGate gate) throws IOException {
    if (config.retention().isZero() || blocks.isEmpty()) {
      return;
    }
    long newest = Math.max(head.maxTime(), blocks.stream().mapToLong(b -> b.meta().maxTime()).max().orElse(Long.MIN_VALUE));
    long cutoff = newest - config.retention().toMillis();
    for (Block b : blocks) {
      if (b.meta().maxTime() > cutoff) {
        continue;
      }
      if (!gate.mayDelete(tenant, b)) {
        if (keptPastRetention.add(b.meta().ulid())) {
          log.info("msg=\"block past retention kept until it is shipped\" user={} block={} max_time={}", tenant,
              b.meta().ulid(), b.meta().maxTime());
        }
        continue;
      }
      keptPastRetention.remove(b.meta().ulid());
      blocks.remove(b);
      BlockWriter.deleteRecursively(b.dir());
      metrics.blocksDeleted.increment();
      log.info("msg=\"block deleted by retention\" user={} block={} max_time={}", tenant, b.meta().ulid(),
          b.meta().maxTime());
    }
  }

  /**
   * Series from blocks and head merged by labels, in label order. The head is read before the
   * block list: every compaction adds its block before it truncates the head, so a compaction
   * running meanwhile shows its samples twice (merged) rather than not at all.
   */
  public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
    List<SeriesChunks> fromHead = head.select(mint, maxt, matchers);
    List<Block> overlapping = new ArrayList<>();
    for (Block b : blocks) {
      if (b.overlaps(mint, maxt)) {
        overlapping.add(b);
      }
    }
    if (overlapping.isEmpty()) {
      return fromHead;
    }
    TreeMap<Labels, List<ChunkData>> merged = new TreeMap<>();
    for (Block b : overlapping) {
      for (SeriesChunks s : b.select(mint, maxt, matchers)) {
        merged.computeIfAbsent(s.labels(), k -> new ArrayList<>()).addAll(s.chunks());
      }
    }
    for (SeriesChunks s : fromHead) {
      merged.computeIfAbsent(s.labels(), k -> new ArrayList<>()).addAll(s.chunks());
    }
    List<SeriesChunks> out = new ArrayList<>(merged.size());
    merged.forEach((l, c) -> {
      c.sort(Comparator.comparingLong(ChunkData::minTime));
      out.add(new SeriesChunks(l, c));
    });
    return out;
  }

  public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
    TreeSet<String> names = new TreeSet<>(Utf8Order.COMPARATOR);
    names.addAll(head.labelNames(mint, maxt, matchers));
    for (Block b : blocks) {
      names.addAll(b.labelNames(mint, maxt, matchers));
    }
    return new ArrayList<>(names);
  }

  public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
    TreeSet<String> values = new TreeSet<>(Utf8Order.COMPARATOR);
    values.addAll(head.labelValues(name, mint, maxt, matchers));
    for (Block b : blocks) {
      values.addAll(b.labelValues(name, mint, maxt, matchers));
    }
    return new ArrayList<>(values);
  }

  void close() throws IOException {
    Wal w = wal;
    Wal o = head.wbl();
    try {
      if (w != null) {
        w.close();
      }
    } finally {
      if (o != null) {
        o.close();
      }
    }
  }
}
