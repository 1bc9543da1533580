package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Reads a WAL in Weir's format before 2026-12 ({@code <tenant>/weir-wal}), only to convert it
 * ({@link dev.weir.storage.tsdb.DataDirLayout}). Records were framed as
 * {@code magic 0xA7 | payload length (4 bytes BE) | CRC32C of payload (4 bytes BE) | payload} with
 * payloads SERIES (1: count, then ref uvarint, #labels, names and values), SAMPLES (2: count, base
 * ref uvarint, base time varint, then ref and time deltas as varints and the value's 8 bytes) and
 * SOURCE (3: Kafka offset varint); checkpoints {@code checkpoint.NNNNNNNN/} held the same format.
 *
 * <p>Reading stops at the first damage. A torn tail (no intact record after it) is what a crash
 * leaves and is dropped; corruption followed by intact records is an error, since dropping them
 * silently would lose acknowledged samples.
 *
 * <p>Stateless.
 */
public final class LegacyWalReader {
  static final int MAGIC = 0xA7;
  static final int HEADER_BYTES = 9;

  private LegacyWalReader() {}

  /**
   * What was read.
   *
   * @param records records read
   * @param tornTail where a torn tail was dropped ("segment offset N"), or null
   */
  public record Result(long records, @Nullable String tornTail) {}

  /**
   * Reads the latest checkpoint, then the segments after it, into the visitor.
   *
   * @throws WalCorruptionException when intact records follow a damaged one
   */
  public static Result read(Path dir, WalRecords.Visitor v) throws IOException, WalCorruptionException {
    long records = 0;
    Checkpoint.Info cp = Checkpoint.latest(dir);
    if (cp != null) {
      for (int s : Wal.segments(cp.dir())) {
        Seg r = readSegment(Wal.segmentPath(cp.dir(), s), v);
        records += r.records;
        if (r.damageAt >= 0) {
          throw new WalCorruptionException(Wal.segmentPath(cp.dir(), s), r.damageAt,
              "old-format WAL checkpoint is damaged at " + Wal.segmentPath(cp.dir(), s) + " offset " + r.damageAt);
        }
      }
    }
    List<Integer> segments = Wal.segments(dir);
    if (cp != null) {
      segments.removeIf(s -> s <= cp.index());
    }
    for (int i = 0; i < segments.size(); i++) {
      Path p = Wal.segmentPath(dir, segments.get(i));
      Seg r = readSegment(p, v);
      records += r.records;
      if (r.damageAt >= 0) {
        boolean laterValid = r.validAfter;
        for (int j = i + 1; j < segments.size() && !laterValid; j++) {
          laterValid = Files.size(Wal.segmentPath(dir, segments.get(j))) > 0;
        }
        if (laterValid) {
          throw new WalCorruptionException(p, r.damageAt, "old-format WAL is corrupt in the middle at " + p
              + " offset " + r.damageAt + " (intact records follow); start the previous Weir version once with"
              + " --blocks-storage.tsdb.wal-repair=true to repair it, or move " + dir + " away (its data is lost)");
        }
        return new Result(records, p + " offset " + r.damageAt);
      }
    }
    return new Result(records, null);
  }

  private static final class Seg {
    long records;
    int damageAt = -1;
    boolean validAfter;
  }

  private static Seg readSegment(Path path, WalRecords.Visitor v) throws IOException {
    Seg out = new Seg();
    long size = Files.size(path);
    if (size == 0) {
      return out;
    }
    if (size > Integer.MAX_VALUE) {
      throw new IOException("WAL segment larger than 2 GiB: " + path);
    }
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      ByteBuffer buf = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
      int limit = (int) size;
      int pos = 0;
      while (pos < limit) {
        int n = validAt(buf, pos, limit);
        boolean ok = n > 0;
        if (ok) {
          ByteBuffer payload = buf.duplicate();
          payload.limit(pos + n).position(pos + HEADER_BYTES);
          try {
            decode(payload.slice(), v);
          } catch (WalRecords.VisitorException e) {
            throw e.unwrap();
          } catch (RuntimeException e) {
            ok = false;
          }
        }
        if (!ok) {
          out.damageAt = pos;
          for (int p = pos + 1; p < limit && !out.validAfter; p++) {
            out.validAfter = validAt(buf, p, limit) > 0;
          }
          return out;
        }
        out.records++;
        pos += n;
      }
    }
    return out;
  }

  private static int validAt(ByteBuffer file, int pos, int limit) {
    if (pos + HEADER_BYTES > limit || (file.get(pos) & 0xff) != MAGIC) {
      return -1;
    }
    int len = file.getInt(pos + 1);
    if (len <= 0 || len > WalRecords.MAX_RECORD_BYTES || (long) pos + HEADER_BYTES + len > limit) {
      return -1;
    }
    CRC32C c = new CRC32C();
    ByteBuffer payload = file.duplicate();
    payload.limit(pos + HEADER_BYTES + len).position(pos + HEADER_BYTES);
    c.update(payload);
    return (int) c.getValue() == file.getInt(pos + 5) ? HEADER_BYTES + len : -1;
  }

  private static void decode(ByteBuffer payload, WalRecords.Visitor v) {
    ByteSource in = new ByteSource(payload);
    int type = in.get();
    switch (type) {
      case 1 -> {
        long n = in.uvarint();
        for (long i = 0; i < n; i++) {
          int ref = (int) in.uvarint();
          Labels labels = WalRecords.labels(in);
          visit(() -> v.series(ref, labels));
        }
      }
      case 2 -> {
        long n = in.uvarint();
        long baseRef = in.uvarint();
        long baseT = in.varint();
        for (long i = 0; i < n; i++) {
          int ref = (int) (baseRef + in.varint());
          long t = baseT + in.varint();
          double value = in.getDouble();
          visit(() -> v.sample(ref, t, value));
        }
      }
      case 3 -> {
        long offset = in.varint();
        visit(() -> v.source(offset));
      }
      default -> throw new IllegalStateException("unknown record type " + type);
    }
    if (in.remaining() != 0) {
      throw new IllegalStateException(in.remaining() + " trailing bytes in record");
    }
  }

  private static void visit(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      throw new WalRecords.VisitorException(e);
    }
  }
}
