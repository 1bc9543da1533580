package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.wal.Wal;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the out-of-order head into blocks (Prometheus' {@code compactOOOHead}): seal the OOO
 * chunks and roll the WBL (one step under the append lock), write one block per block range the
 * sealed samples fall in, drop the sealed chunks, delete the WBL segments they came from.
 *
 * <p>The blocks may overlap blocks of in-order data and the in-order head's range; every reader
 * merges overlapping chunks by timestamp. They carry {@code "weir": {"source": "ingester",
 * "outOfOrder": true}} in meta.json (Prometheus marks them with the compaction hint
 * {@code from-out-of-order}; Weir leaves Prometheus' compaction section to the block code), so
 * that at start-up they do not raise the head's minimum valid time: they may reach past it.
 *
 * <p>A crash after a block is written and before the WBL segments are deleted replays those
 * samples again; the next OOO compaction writes them once more into another block, and queries
 * return each sample once.
 *
 * <p>Stateless; runs on the storage's background thread.
 */
final class OooCompaction {
  private static final Logger log = LoggerFactory.getLogger(OooCompaction.class);
  static final String META = "\"weir\": {\"source\": \"" + TenantDb.HEAD_BLOCK_SOURCE + "\", \"outOfOrder\": true}";

  private OooCompaction() {}

  /** Compacts the tenant's out-of-order head; returns the number of blocks written. */
  static int run(TenantDb db, TenantHead head, TsdbConfig config, LongSupplier wallClock, TsdbMetrics metrics)
      throws IOException {
    TenantHead.OooSnapshot snap = head.sealOoo();
    if (snap == null) {
      return 0;
    }
    long range = config.head().chunkRangeMillis();
    TreeMap<Long, List<SeriesChunks>> byRange = new TreeMap<>();
    for (SeriesChunks s : snap.series()) {
      List<ChunkData> sorted = new ArrayList<>(s.chunks());
      sorted.sort(Comparator.comparingLong(ChunkData::minTime));
      SeriesChunks.Samples all = new SeriesChunks(s.labels(), sorted).samples(Long.MIN_VALUE, Long.MAX_VALUE);
      split(s, all, range, config.head().samplesPerChunk(), byRange);
    }
    int written = 0;
    for (Map.Entry<Long, List<SeriesChunks>> e : byRange.entrySet()) {
      long start = e.getKey();
      String ulid = Ulid.random(wallClock.getAsLong());
      BlockWriter.write(config.blocksDir(db.tenant()), ulid, start, start + range, e.getValue(), META);
      Block b = Block.open(config.blocksDir(db.tenant()).resolve(ulid));
      db.addBlock(b);
      written++;
      metrics.oooCompactions.increment();
      log.info("msg=\"out-of-order head compacted into block\" user={} block={} min_time={} max_time={} series={}"
          + " samples={}", db.tenant(), ulid, start, start + range, b.meta().numSeries(), b.meta().numSamples());
    }
    head.dropSealedOoo(snap);
    Wal wbl = head.wbl();
    if (wbl != null) {
      wbl.deleteSegmentsBefore(snap.lastWblSegment() + 1);
    }
    head.truncate(head.minValidTime()); // removes series left without any sample; moves no bound
    return written;
  }

  /** Cuts one series' samples into chunks per block range (at most {@code perChunk} samples each). */
  private static void split(SeriesChunks s, SeriesChunks.Samples all, long range, int perChunk,
      TreeMap<Long, List<SeriesChunks>> byRange) {
    long[] ts = all.timestamps();
    double[] vs = all.values();
    int i = 0;
    while (i < ts.length) {
      long start = Math.floorDiv(ts[i], range) * range;
      List<ChunkData> chunks = new ArrayList<>();
      while (i < ts.length && ts[i] < start + range) {
        XorAppender a = new XorAppender();
        while (i < ts.length && ts[i] < start + range && a.numSamples() < perChunk) {
          a.append(ts[i], vs[i]);
          i++;
        }
        chunks.add(new ChunkData(a.minTime(), a.maxTime(), a.bytes()));
      }
      byRange.computeIfAbsent(start, k -> new ArrayList<>()).add(new SeriesChunks(s.labels(), chunks));
    }
  }

  /** Whether a block holds compacted out-of-order samples ({@code weir.outOfOrder} in meta.json). */
  static boolean isOutOfOrderBlock(Block b) {
    try {
      return "true".equals(WeirMeta.value(b.dir(), "outOfOrder"));
    } catch (IOException e) {
      return false; // Block.open read it already; a block it cannot read is not one of ours
    }
  }
}
