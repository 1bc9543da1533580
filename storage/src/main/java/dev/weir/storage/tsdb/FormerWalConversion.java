package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.LegacyWalReader;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalCorruptionException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 2 of {@link DataDirLayout#migrate}: converts each tenant's WAL in Weir's former format
 * ({@code weir-wal/}) into the checkpoint {@code wal/checkpoint.00000000} of a Prometheus-format
 * WAL. The order of the steps is the marker a restart reads (see {@link DataDirLayout}).
 *
 * <p>Stateless.
 */
final class FormerWalConversion {
  private static final Logger log = LoggerFactory.getLogger(FormerWalConversion.class);
  /** The converted WAL's checkpoint index: the WAL goes on in segment 1. */
  static final int CHECKPOINT_INDEX = 0;

  private FormerWalConversion() {}

  static List<String> convertAll(Path tsdbRoot, DataDirLayout.Mover mover) throws IOException, WalCorruptionException {
    List<String> converted = new ArrayList<>();
    if (!Files.isDirectory(tsdbRoot)) {
      return converted;
    }
    List<Path> tenants;
    try (Stream<Path> s = Files.list(tsdbRoot)) {
      tenants = s.filter(Files::isDirectory).sorted().toList();
    }
    for (Path tenantDir : tenants) {
      if (convert(tenantDir, mover)) {
        converted.add(tenantDir.getFileName().toString());
      }
    }
    return converted;
  }

  /** Converts one tenant's former WAL, if it has one; true when it did. */
  static boolean convert(Path tenantDir, DataDirLayout.Mover mover) throws IOException, WalCorruptionException {
    String tenant = tenantDir.getFileName().toString();
    Path former = tenantDir.resolve(DataDirLayout.FORMER_WAL);
    Path converting = tenantDir.resolve(DataDirLayout.CONVERTING_WAL);
    Path wal = tenantDir.resolve(DataDirLayout.WAL);
    if (Files.isDirectory(former)) {
      if (Files.isDirectory(converting) || hasData(wal)) {
        Path other = Files.isDirectory(converting) ? converting : wal;
        if (DataDirLayout.isEmptyDir(former)) {
          Files.delete(former); // nothing was ever written there
          DataDirLayout.syncDir(tenantDir);
        } else {
          throw new IOException("tenant " + tenant + " has a WAL in Weir's former format " + former + " and another"
              + " at " + other + " (was an older Weir started on this data directory?); keep one: move the"
              + " other away and restart");
        }
      } else {
        mover.move(former, converting);
        DataDirLayout.syncDir(tenantDir);
      }
    }
    if (!Files.isDirectory(converting)) {
      return false;
    }
    Checkpoint.Info cp = Checkpoint.latest(wal);
    if (cp == null) {
      if (!Wal.segments(wal).isEmpty()) {
        throw new IOException("tenant " + tenant + ": " + wal + " holds segments but no checkpoint while " + converting
            + " is being converted; move one of them away and restart");
      }
      long t0 = System.nanoTime();
      LegacyWalReader.Result[] read = new LegacyWalReader.Result[1];
      cp = Checkpoint.write(wal, CHECKPOINT_INDEX, into -> read[0] = LegacyWalReader.read(converting, into));
      if (read[0].tornTail() != null) {
        log.warn("msg=\"former WAL had a torn tail (crash mid-write?): converted up to it\" user={} at=\"{}\"",
            tenant, read[0].tornTail());
      }
      log.info("msg=\"WAL converted to Prometheus' format\" user={} records={} checkpoint={} seconds={}", tenant,
          read[0].records(), cp.dir(), String.format("%.2f", (System.nanoTime() - t0) / 1e9));
    }
    Checkpoint.deleteRecursively(converting);
    DataDirLayout.syncDir(tenantDir);
    return true;
  }

  static boolean hasData(Path wal) throws IOException {
    return !Wal.segments(wal).isEmpty() || Checkpoint.latest(wal) != null;
  }
}
