package dev.weir.storage.tsdb.wal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import dev.weir.storage.util.StringCache;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays a WAL directory: the latest checkpoint, then the segments after it, in order.
 *
 * <p>Damage handling. A record whose fragments fail their checks (type, length within the page,
 * CRC, sequence FULL | FIRST MIDDLE* LAST, zero page padding; see {@link WalPages}) or that does not
 * decode is damage at the offset of its first fragment. If no valid record follows it anywhere
 * (later in the segment or in a later segment) it is a torn tail, the normal result of a crash mid-write: the segment is
 * truncated there, with a warning and a metric, and replay succeeds. If valid records follow, the
 * WAL is corrupt in the middle. With {@code repair} (the default, as in Prometheus) the segment is
 * truncated at the damage and later segments are deleted: everything before it is kept, what
 * follows is lost, logged at ERROR, counted in metrics and described in the {@link Result} (records,
 * bytes and segments dropped, and the lowest source offset the dropped data may have come from,
 * so a Kafka consumer can re-read it). Without {@code repair}, replay fails with a
 * {@link WalCorruptionException} and nothing is changed. {@link #inspect} reads the same way but
 * never changes a file: it reports the first damage and stops there.
 *
 * <p>Stateless; one replay per call.
 */
public final class WalReader {
  private static final Logger log = LoggerFactory.getLogger(WalReader.class);
  /**
   * Slots of the cache through which label strings are decoded, per read of a directory's
   * segments: repeated names and values become one String (less garbage in a replay).
   */
  private static final int STRING_CACHE_SLOTS = 16_384;

  private WalReader() {}

  /**
   * What a replay did.
   *
   * @param segments segments read (checkpoint and WAL)
   * @param records records replayed
   * @param bytes bytes of the records replayed
   * @param truncatedBytes bytes dropped by a repair (tail or corruption), including deleted segments
   * @param repairedTail a torn tail was truncated (nothing valid after it)
   * @param repairedCorruption the WAL was corrupt in the middle and truncated there
   * @param droppedRecords intact records after the damage that the repair dropped
   * @param droppedSegments whole segments after the damaged one that the repair deleted
   * @param damagedSegment the segment where the damage was found, or null
   * @param damageOffset byte offset of the damage in that segment, or -1
   * @param firstDroppedSourceOffset the lowest source (Kafka) offset that data lost by the repair
   *     may have come from (the last SOURCE record before the damage, or a dropped one), or -1 when
   *     nothing was dropped or the records carry no source offset
   * @param maxSourceOffset the highest source (Kafka) offset replayed (checkpoint included), or -1:
   *     records up to it were applied before, so reading them again is a re-read
   */
  public record Result(int segments, long records, long bytes, long truncatedBytes, boolean repairedTail,
      boolean repairedCorruption, long droppedRecords, int droppedSegments, @Nullable Path damagedSegment,
      long damageOffset, long firstDroppedSourceOffset, long maxSourceOffset) {

    /** Whether the replay changed the WAL on disk. */
    public boolean repaired() {
      return repairedTail || repairedCorruption;
    }
  }

  public static Result replay(Path walDir, WalRecords.Visitor visitor, boolean repair, WalMetrics metrics,
      String tenant) throws IOException, WalCorruptionException {
    long records = 0;
    long bytes = 0;
    int segmentsRead = 0;
    long maxSource = -1;
    Checkpoint.Info cp = Checkpoint.latest(walDir);
    if (cp != null) {
      List<Integer> cpSegments = Wal.segments(cp.dir());
      Outcome o = replaySegments(cp.dir(), cpSegments, visitor, false, metrics, tenant, Mode.CHECKPOINT);
      records += o.records;
      bytes += o.bytes;
      segmentsRead += cpSegments.size();
      maxSource = o.maxSource;
    }
    List<Integer> segments = Wal.segments(walDir);
    if (cp != null) {
      segments.removeIf(s -> s <= cp.index());
    }
    Outcome o = replaySegments(walDir, segments, visitor, repair, metrics, tenant, Mode.WAL);
    metrics.recordsReplayed.increment(records + o.records);
    return new Result(segmentsRead + segments.size(), records + o.records, bytes + o.bytes, o.truncated,
        o.repairedTail, o.repairedCorruption, o.droppedRecords, o.droppedSegments, o.damagedSegment,
        o.damageOffset, o.firstDroppedSource, Math.max(maxSource, o.maxSource));
  }

  /**
   * Bytes {@link #replay} would read from {@code walDir}: the newest checkpoint's segments and the
   * WAL segments after it (for progress: the total of a replay).
   */
  public static long replayBytes(Path walDir) throws IOException {
    long total = 0;
    Checkpoint.Info cp = Checkpoint.latest(walDir);
    if (cp != null) {
      for (int s : Wal.segments(cp.dir())) {
        total += Files.size(Wal.segmentPath(cp.dir(), s));
      }
    }
    for (int s : Wal.segments(walDir)) {
      if (cp == null || s > cp.index()) {
        total += Files.size(Wal.segmentPath(walDir, s));
      }
    }
    return total;
  }

  /**
   * What {@link #inspect} found.
   *
   * @param segments segments read (checkpoint and WAL, up to the damaged one)
   * @param records intact records read before the first damage
   * @param bytes bytes of those records
   * @param damagedSegment the segment (of the checkpoint or the WAL) holding the first damage, or null
   * @param damageOffset byte offset of the damage in that segment, or -1
   * @param damage what is wrong there (e.g. "checksum mismatch"), or null
   * @param validRecordsAfterDamage intact records after the damage (in its segment and the later
   *     ones of the same directory); 0 means a torn tail, which a replay truncates
   * @param maxSourceOffset the highest source (Kafka) offset read, or -1
   */
  public record Inspection(int segments, long records, long bytes, @Nullable Path damagedSegment, long damageOffset,
      @Nullable String damage, long validRecordsAfterDamage, long maxSourceOffset) {}

  /**
   * Reads a WAL directory like {@link #replay} (the latest checkpoint, then the segments after
   * it) without changing anything on disk and without metrics: the first damage, in the
   * checkpoint or a segment, is reported and ends the reading.
   */
  public static Inspection inspect(Path walDir, WalRecords.Visitor visitor, String tenant)
      throws IOException {
    WalMetrics unused = new WalMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    Checkpoint.Info cp = Checkpoint.latest(walDir);
    Outcome o = new Outcome();
    int segmentsRead = 0;
    if (cp != null) {
      List<Integer> cpSegments = Wal.segments(cp.dir());
      o = inspectSegments(cp.dir(), cpSegments, visitor, unused, tenant);
      segmentsRead += cpSegments.size();
    }
    if (o.damagedSegment == null) {
      List<Integer> segments = Wal.segments(walDir);
      if (cp != null) {
        segments.removeIf(s -> s <= cp.index());
      }
      Outcome w = inspectSegments(walDir, segments, visitor, unused, tenant);
      w.records += o.records;
      w.bytes += o.bytes;
      w.maxSource = Math.max(w.maxSource, o.maxSource);
      segmentsRead += segments.size();
      o = w;
    }
    return new Inspection(segmentsRead, o.records, o.bytes, o.damagedSegment, o.damageOffset, o.damageWhat,
        o.droppedRecords, o.maxSource);
  }

  private static Outcome inspectSegments(Path dir, List<Integer> segments, WalRecords.Visitor visitor,
      WalMetrics unused, String tenant) throws IOException {
    try {
      return replaySegments(dir, segments, visitor, false, unused, tenant, Mode.INSPECT);
    } catch (WalCorruptionException e) {
      throw new AssertionError("inspection reports damage instead of throwing", e);
    }
  }

  /**
   * Reads the given closed segments in order, for building a checkpoint: any damage is an error,
   * since a closed segment was fsynced whole and later segments exist.
   */
  public static void readStrict(Path dir, List<Integer> segments, WalRecords.Visitor visitor, WalMetrics metrics,
      String tenant) throws IOException, WalCorruptionException {
    replaySegments(dir, segments, visitor, false, metrics, tenant, Mode.STRICT);
  }

  private enum Mode {
    WAL,
    CHECKPOINT,
    STRICT,
    /** Report the damage, change nothing. */
    INSPECT
  }

  private static final class Outcome {
    long records;
    long bytes;
    long truncated;
    boolean repairedTail;
    boolean repairedCorruption;
    long droppedRecords;
    int droppedSegments;
    @Nullable Path damagedSegment;
    long damageOffset = -1;
    @Nullable String damageWhat;
    long firstDroppedSource = -1;
    /** The source offset of the last SOURCE record replayed, or -1. */
    long lastSource = -1;
    /** The highest source offset replayed, or -1 (with concurrent shards they come out of order). */
    long maxSource = -1;
  }

  /**
   * Intact records found after damage: how many, and the lowest source offset among them. A
   * record counts when all its fragments are intact and in sequence; the search tries every byte
   * that could start one (a FULL or FIRST type byte), then follows on record by record.
   */
  private static final class Scan {
    long records;
    long minSource = Long.MAX_VALUE;

    void add(ByteBuffer buf, int from, int limit) {
      int p = from;
      while (p < limit) {
        int type = buf.get(p) & 0xff;
        if (type == WalPages.FULL || type == WalPages.FIRST) {
          WalPages.Reader r = new WalPages.Reader(buf, p, limit);
          ByteBuffer payload = r.next();
          if (payload != null && payload.hasRemaining()) { // no writer logs an empty record
            records++;
            long src = WalRecords.sourceOffset(payload);
            if (src >= 0) {
              minSource = Math.min(minSource, src);
            }
            p = r.position();
            continue;
          }
        }
        p++;
      }
    }
  }

  private static Outcome replaySegments(Path dir, List<Integer> segments, WalRecords.Visitor visitor,
      boolean repair, WalMetrics metrics, String tenant, Mode mode)
      throws IOException, WalCorruptionException {
    Outcome out = new Outcome();
    WalRecords.Visitor v = new WalRecords.Visitor() {
      @Override
      public void series(int ref, dev.weir.storage.tsdb.labels.Labels labels) {
        visitor.series(ref, labels);
      }

      @Override
      public boolean acceptsEncodedSeries() {
        return visitor.acceptsEncodedSeries();
      }

      @Override
      public void seriesEncoded(int ref, byte[] compact, int hash) {
        visitor.seriesEncoded(ref, compact, hash);
      }

      @Override
      public void sample(int ref, long t, double value) {
        visitor.sample(ref, t, value);
      }

      @Override
      public void histogram(int ref, long t, dev.weir.storage.tsdb.chunk.NativeHistogram h) {
        visitor.histogram(ref, t, h);
      }

      @Override
      public void source(long offset) {
        out.lastSource = offset;
        out.maxSource = Math.max(out.maxSource, offset);
        visitor.source(offset);
      }

      @Override
      public void exemplar(int ref, long t, double value, dev.weir.storage.tsdb.labels.Labels labels) {
        visitor.exemplar(ref, t, value, labels);
      }

      @Override
      public void metadata(MetadataRecords.Entry entry) {
        visitor.metadata(entry);
      }
    };
    StringCache strings = new StringCache(STRING_CACHE_SLOTS);
    for (int i = 0; i < segments.size(); i++) {
      Path path = Wal.segmentPath(dir, segments.get(i));
      long size = Files.size(path);
      if (size == 0) {
        continue;
      }
      if (size > Integer.MAX_VALUE) {
        throw new IOException("WAL segment larger than 2 GiB: " + path);
      }
      int damageAt = -1;
      String damage = null;
      try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
        MappedByteBuffer buf = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        WalPages.Reader r = new WalPages.Reader(buf, 0, (int) size);
        ByteBuffer payload;
        while ((payload = r.next()) != null) {
          try {
            WalRecords.decode(payload, v, strings);
          } catch (WalRecords.VisitorException e) {
            throw e.unwrap();
          } catch (RuntimeException e) {
            damageAt = r.recordStart();
            damage = "record at offset " + damageAt + " does not decode: " + e;
            break;
          }
          int n = r.position() - r.recordStart();
          out.records++;
          out.bytes += n;
          visitor.recordRead(n);
        }
        if (damageAt < 0 && r.damageAt() >= 0) {
          damageAt = r.damageAt();
          damage = r.damage();
        }
        if (damageAt >= 0) {
          onDamage(new Damage(dir, path, damageAt, damage, size, buf, segments.subList(i + 1, segments.size())),
              repair, metrics, tenant, mode, out);
          break;
        }
      }
    }
    return out;
  }

  /** Damage found at {@code offset} of {@code segment}; {@code later} are the segments after it. */
  private record Damage(Path dir, Path segment, int offset, String what, long size, ByteBuffer buf,
      List<Integer> later) {}

  /** The valid records after the damage, in its segment and the later ones. */
  private static Scan scanAfter(Damage d) throws IOException {
    Scan dropped = new Scan();
    dropped.add(d.buf, d.offset + 1, (int) d.size);
    for (int s : d.later) {
      Path p = Wal.segmentPath(d.dir, s);
      long size = Files.size(p);
      if (size > 0 && size <= Integer.MAX_VALUE) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
          dropped.add(ch.map(FileChannel.MapMode.READ_ONLY, 0, size), 0, (int) size);
        }
      }
    }
    return dropped;
  }

  /**
   * Handles damage: refuses in a checkpoint or closed segment; in the WAL truncates a torn tail,
   * and repairs (or, without {@code repair}, refuses) corruption in the middle, filling {@code out}.
   */
  private static void onDamage(Damage d, boolean repair, WalMetrics metrics, String tenant, Mode mode, Outcome out)
      throws IOException, WalCorruptionException {
    if (mode == Mode.INSPECT) {
      out.damagedSegment = d.segment;
      out.damageOffset = d.offset;
      out.damageWhat = d.what;
      out.droppedRecords = scanAfter(d).records;
      return;
    }
    if (mode == Mode.STRICT) {
      throw new WalCorruptionException(d.segment, d.offset, "closed WAL segment of tenant " + tenant
          + " is damaged at " + d.segment + " offset " + d.offset + ": " + d.what);
    }
    if (mode == Mode.CHECKPOINT) {
      throw new WalCorruptionException(d.segment, d.offset, "WAL checkpoint of tenant " + tenant
          + " is corrupt at " + d.segment + " offset " + d.offset + ": " + d.what
          + ". Checkpoints are written atomically, so this is disk damage; move the checkpoint away"
          + " to replay without it (data only in it is lost).");
    }
    Scan dropped = scanAfter(d);
    boolean laterValid = dropped.records > 0;
    if (laterValid) {
      metrics.corruptions.increment();
      if (!repair) {
        throw new WalCorruptionException(d.segment, d.offset, "WAL of tenant " + tenant + " is corrupt in the"
            + " middle: " + d.segment + " offset " + d.offset + " (" + d.what + "), and " + dropped.records
            + " valid records follow. Refusing to start because --blocks-storage.tsdb.wal-repair=false. To"
            + " truncate the WAL at this point and lose what follows, restart with"
            + " --blocks-storage.tsdb.wal-repair=true (the default).");
      }
    }
    long droppedBytes = truncateFrom(d.dir, d.segment, d.offset, d.size, d.later);
    record(out, d, dropped, droppedBytes);
    metrics.truncatedBytes.increment(droppedBytes);
    if (laterValid) {
      out.repairedCorruption = true;
      metrics.corruptionRepairs.increment();
      metrics.droppedRecords.increment(dropped.records);
      metrics.droppedSegments.increment(d.later.size());
      log.error("msg=\"WAL corrupt in the middle: truncated at the corruption, data after it is lost\""
          + " user={} segment={} offset={} dropped_bytes={} dropped_records={} dropped_segments={}"
          + " first_dropped_source_offset={} damage=\"{}\"", tenant, d.segment, d.offset, droppedBytes,
          dropped.records, d.later.size(), out.firstDroppedSource, d.what);
    } else {
      out.repairedTail = true;
      metrics.tailRepairs.increment();
      log.warn("msg=\"WAL tail torn or corrupt (crash mid-write?): truncated at the last good record\""
          + " user={} segment={} offset={} dropped_bytes={} damage=\"{}\"", tenant, d.segment, d.offset,
          droppedBytes, d.what);
    }
  }

  /** Notes what a repair dropped in the outcome. */
  private static void record(Outcome out, Damage d, Scan dropped, long droppedBytes) {
    long firstSource = Math.min(dropped.minSource, out.lastSource >= 0 ? out.lastSource : Long.MAX_VALUE);
    out.truncated += droppedBytes;
    out.droppedRecords += dropped.records;
    out.droppedSegments += d.later.size();
    out.damagedSegment = d.segment;
    out.damageOffset = d.offset;
    out.firstDroppedSource = firstSource == Long.MAX_VALUE ? -1 : firstSource;
  }

  /** Truncates {@code path} at {@code pos} and deletes later segments; returns bytes dropped. */
  private static long truncateFrom(Path dir, Path path, int pos, long size, List<Integer> later) throws IOException {
    long dropped = size - pos;
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
      ch.truncate(pos);
      ch.force(true);
    }
    for (int s : later) {
      Path p = Wal.segmentPath(dir, s);
      dropped += Files.size(p);
      Files.delete(p);
    }
    Wal.syncDir(dir);
    return dropped;
  }
}
