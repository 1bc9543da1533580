package dev.weir.storage.testing;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalMetrics;
import dev.weir.storage.tsdb.wal.WalReader;
import dev.weir.storage.tsdb.wal.WalRecords;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes WALs in Weir's former format (magic 0xA7 | length | CRC32C | payload, payloads with
 * uvarint refs), as a Weir before the Prometheus-format WAL left them, so tests can check the
 * conversion at start-up ({@code DataDirLayout}). One former record per series, sample or source.
 */
public final class FormerWal {
  private FormerWal() {}

  /**
   * Rewrites the current-format WAL at {@code from} in the former format at {@code to} (same
   * checkpoint and segment numbers, same records in the same order), then deletes {@code from}.
   */
  public static void downgrade(Path from, Path to) throws Exception {
    Files.createDirectories(to);
    Checkpoint.Info cp = Checkpoint.latest(from);
    if (cp != null) {
      Path cpTo = Files.createDirectories(to.resolve(cp.dir().getFileName().toString()));
      for (int s : Wal.segments(cp.dir())) {
        rewrite(cp.dir(), s, cpTo);
      }
    }
    for (int s : Wal.segments(from)) {
      if (cp == null || s > cp.index()) {
        rewrite(from, s, to);
      }
    }
    Checkpoint.deleteRecursively(from);
  }

  private static void rewrite(Path dir, int segment, Path to) throws Exception {
    ByteSink out = new ByteSink(1 << 16);
    WalReader.readStrict(dir, List.of(segment), new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        ByteSink p = new ByteSink(64).put(1).putUvarint(1).putUvarint(ref).putUvarint(labels.size());
        for (int i = 0; i < labels.size(); i++) {
          p.putString(labels.name(i)).putString(labels.value(i));
        }
        frame(out, p);
      }

      @Override
      public void sample(int ref, long t, double v) {
        frame(out, new ByteSink(32).put(2).putUvarint(1).putUvarint(ref).putVarint(t).putVarint(0).putVarint(0)
            .putDouble(v));
      }

      @Override
      public void source(long offset) {
        frame(out, new ByteSink(16).put(3).putVarint(offset));
      }
    }, WalMetrics.noop(), "t");
    Files.write(Wal.segmentPath(to, segment), out.toByteArray());
  }

  /** Appends one former-format record. */
  public static void frame(ByteSink out, ByteSink payload) {
    CRC32C crc = new CRC32C();
    crc.update(payload.array(), 0, payload.length());
    out.put(0xA7).putBe32(payload.length()).putBe32((int) crc.getValue()).put(payload.array(), 0, payload.length());
  }

  /** Writes a former-format segment with the given payloads. */
  public static void writeSegment(Path file, List<ByteSink> payloads) throws IOException {
    ByteSink out = new ByteSink(1 << 12);
    for (ByteSink p : payloads) {
      frame(out, p);
    }
    Files.createDirectories(file.getParent());
    Files.write(file, out.toByteArray());
  }
}
