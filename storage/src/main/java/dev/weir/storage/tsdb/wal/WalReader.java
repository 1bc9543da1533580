package dev.weir.storage.tsdb.wal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays a WAL directory: the latest checkpoint, then the segments after it, in order.
 *
 * <p>Damage handling. A record that fails its frame check (magic, length, CRC) or does not decode
 * is damage at that offset. If no valid record follows it anywhere (later in the segment or in a
 * later segment) it is a torn tail, the normal result of a crash mid-write: the segment is
 * truncated there, with a warning and a metric, and replay succeeds. If valid records follow, the
 * WAL is corrupt in the middle and truncating would drop acknowledged data: replay fails with a
 * {@link WalCorruptionException}, unless {@code repair} is set, in which case it truncates at the
 * damage, deletes later segments, and says so loudly.
 *
 * <p>Stateless; one replay per call.
 */
public final class WalReader {
  private static final Logger log = LoggerFactory.getLogger(WalReader.class);

  private WalReader() {}

  /** What a replay did. */
  public record Result(int segments, long records, long bytes, long truncatedBytes, boolean repairedTail,
      boolean repairedCorruption) {}

  public static Result replay(Path walDir, WalRecords.Visitor visitor, boolean repair, WalMetrics metrics,
      String tenant) throws IOException, WalCorruptionException {
    long records = 0;
    long bytes = 0;
    int segmentsRead = 0;
    Checkpoint.Info cp = Checkpoint.latest(walDir);
    if (cp != null) {
      List<Integer> cpSegments = Wal.segments(cp.dir());
      Outcome o = replaySegments(cp.dir(), cpSegments, visitor, false, metrics, tenant, Mode.CHECKPOINT);
      records += o.records;
      bytes += o.bytes;
      segmentsRead += cpSegments.size();
    }
    List<Integer> segments = Wal.segments(walDir);
    if (cp != null) {
      segments.removeIf(s -> s <= cp.index());
    }
    Outcome o = replaySegments(walDir, segments, visitor, repair, metrics, tenant, Mode.WAL);
    metrics.recordsReplayed.increment(records + o.records);
    return new Result(segmentsRead + segments.size(), records + o.records, bytes + o.bytes, o.truncated,
        o.repairedTail, o.repairedCorruption);
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
    STRICT
  }

  private static final class Outcome {
    long records;
    long bytes;
    long truncated;
    boolean repairedTail;
    boolean repairedCorruption;
  }

  private static Outcome replaySegments(Path dir, List<Integer> segments, WalRecords.Visitor visitor,
      boolean repair, WalMetrics metrics, String tenant, Mode mode)
      throws IOException, WalCorruptionException {
    Outcome out = new Outcome();
    long started = System.nanoTime();
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
        int limit = (int) size;
        int pos = 0;
        while (pos < limit) {
          int n = WalRecords.validAt(buf, pos, limit);
          if (n < 0) {
            damageAt = pos;
            damage = describe(buf, pos, limit);
            break;
          }
          ByteBuffer payload = buf.duplicate();
          payload.limit(pos + n).position(pos + WalRecords.HEADER_BYTES);
          try {
            WalRecords.decode(payload.slice(), visitor);
          } catch (WalRecords.VisitorException e) {
            throw e.unwrap();
          } catch (RuntimeException e) {
            damageAt = pos;
            damage = "record does not decode: " + e.getMessage();
            break;
          }
          out.records++;
          out.bytes += n;
          pos += n;
        }
        if (damageAt >= 0) {
          boolean laterValid = hasValidRecord(buf, damageAt + 1, limit)
              || laterSegmentsHaveRecords(dir, segments.subList(i + 1, segments.size()));
          if (mode == Mode.STRICT) {
            throw new WalCorruptionException(path, damageAt, "closed WAL segment of tenant " + tenant
                + " is damaged at " + path + " offset " + damageAt + ": " + damage);
          }
          if (mode == Mode.CHECKPOINT) {
            throw new WalCorruptionException(path, damageAt, "WAL checkpoint of tenant " + tenant
                + " is corrupt at " + path + " offset " + damageAt + ": " + damage
                + ". Checkpoints are written atomically, so this is disk damage; move the checkpoint away"
                + " to replay without it (data only in it is lost).");
          }
          if (laterValid && !repair) {
            throw new WalCorruptionException(path, damageAt, "WAL of tenant " + tenant + " is corrupt in the"
                + " middle: " + path + " offset " + damageAt + " (" + damage + "), and valid records follow."
                + " Refusing to start, as truncating would lose them. To truncate the WAL at this point and"
                + " lose what follows, restart with --blocks-storage.tsdb.wal-repair=true.");
          }
          long dropped = truncateFrom(dir, path, damageAt, size, segments.subList(i + 1, segments.size()));
          out.truncated += dropped;
          metrics.truncatedBytes.increment(dropped);
          if (laterValid) {
            out.repairedCorruption = true;
            metrics.corruptionRepairs.increment();
            log.error("msg=\"WAL corrupt in the middle: truncated by request (wal-repair), data after it is lost\""
                + " user={} segment={} offset={} dropped_bytes={} damage=\"{}\"", tenant, path, damageAt, dropped, damage);
          } else {
            out.repairedTail = true;
            metrics.tailRepairs.increment();
            log.warn("msg=\"WAL tail torn or corrupt (crash mid-write?): truncated at the last good record\""
                + " user={} segment={} offset={} dropped_bytes={} damage=\"{}\"", tenant, path, damageAt, dropped, damage);
          }
          break;
        }
      }
      double secs = (System.nanoTime() - started) / 1e9;
      log.info("msg=\"WAL replay progress\" user={} {}={}/{} records={} mb_per_s={}", tenant,
          mode == Mode.WAL ? "segments" : "checkpoint_segments", i + 1, segments.size(), out.records,
          String.format("%.1f", out.bytes / 1e6 / Math.max(secs, 1e-9)));
    }
    return out;
  }

  private static String describe(ByteBuffer buf, int pos, int limit) {
    if (pos + WalRecords.HEADER_BYTES > limit) {
      return "record header cut off (" + (limit - pos) + " bytes left)";
    }
    if ((buf.get(pos) & 0xff) != WalRecords.MAGIC) {
      return String.format("bad record marker 0x%02x", buf.get(pos) & 0xff);
    }
    int len = buf.getInt(pos + 1);
    if (len <= 0 || len > WalRecords.MAX_RECORD_BYTES) {
      return "implausible record length " + len;
    }
    if ((long) pos + WalRecords.HEADER_BYTES + len > limit) {
      return "record cut off: needs " + len + " bytes, " + (limit - pos - WalRecords.HEADER_BYTES) + " left";
    }
    return "checksum mismatch";
  }

  private static boolean hasValidRecord(ByteBuffer buf, int from, int limit) {
    for (int p = from; p + WalRecords.HEADER_BYTES <= limit; p++) {
      if ((buf.get(p) & 0xff) == WalRecords.MAGIC && WalRecords.validAt(buf, p, limit) > 0) {
        return true;
      }
    }
    return false;
  }

  private static boolean laterSegmentsHaveRecords(Path dir, List<Integer> later) throws IOException {
    for (int s : later) {
      Path p = Wal.segmentPath(dir, s);
      long size = Files.size(p);
      if (size == 0) {
        continue;
      }
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
        if (hasValidRecord(ch.map(FileChannel.MapMode.READ_ONLY, 0, size), 0, (int) size)) {
          return true;
        }
      }
    }
    return false;
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
