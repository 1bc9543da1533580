package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.wal.WalCorruptionException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a data directory keeps each tenant's storage, and the start-up moves from older layouts.
 *
 * <pre>
 * &lt;data-dir&gt;/tsdb/&lt;tenant&gt;/             one TSDB directory per tenant (Mimir's layout)
 *     01H…/                            blocks, Prometheus' format
 *     wal/                             the WAL, Prometheus' format: segments 00000000…, checkpoint.NNNNNNNN/
 *     shipper.json                     blocks already uploaded
 * </pre>
 *
 * <p>The WAL is a Prometheus WAL ({@link dev.weir.storage.tsdb.wal.WalPages},
 * {@link dev.weir.storage.tsdb.wal.WalRecords}), so {@code promtool tsdb dump} and {@code analyze}
 * read a live tenant directory, head included.
 *
 * <p>{@link #migrate} brings older data directories here, each step safe against kill -9 at any
 * point (the next start resumes or redoes it):
 * <ol>
 *   <li>The first layout kept the WAL apart, in {@code <data-dir>/wal/<tenant>/}: each is moved to
 *       {@code tsdb/<tenant>/weir-wal} with one rename (create the tenant directory and fsync its
 *       parent, rename, fsync both parents); at the end the empty old root is removed.
 *   <li>A WAL in Weir's former format ({@code tsdb/<tenant>/weir-wal}, see
 *       {@link dev.weir.storage.tsdb.wal.LegacyWalReader}) is converted: renamed to
 *       {@code weir-wal.converting} (the marker that conversion began; fsync), read whole and
 *       written as the checkpoint {@code wal/checkpoint.00000000} (written to a temporary
 *       directory, fsynced, renamed: it appears whole or not at all), then deleted. A start that
 *       finds {@code weir-wal.converting} without that checkpoint converts again from the start;
 *       with it, only deletes the rest of {@code weir-wal.converting}. The WAL then continues in
 *       segment 00000001.
 * </ol>
 *
 * <p>There is no way back: an older Weir does not read the new format, and a start finding both a
 * former WAL and a new one with data refuses, naming both, rather than pick one.
 *
 * <p>Stateless; call {@link #migrate} before opening any tenant.
 */
public final class DataDirLayout {
  private static final Logger log = LoggerFactory.getLogger(DataDirLayout.class);

  /** Under the data directory: one directory per tenant. */
  public static final String TSDB_ROOT = "tsdb";
  /** Under a tenant's directory: the WAL, in Prometheus' format. */
  public static final String WAL = "wal";
  /** Under a tenant's directory: a WAL in Weir's former format, converted at start-up. */
  public static final String FORMER_WAL = "weir-wal";
  /** A former WAL whose conversion began (see the class comment). */
  public static final String CONVERTING_WAL = "weir-wal.converting";
  /** Under the data directory, in the old layout: one WAL directory per tenant. */
  public static final String LEGACY_WAL_ROOT = "wal";

  /** Moves a directory (tests substitute one that fails, to interrupt a migration). */
  @FunctionalInterface
  interface Mover {
    void move(Path from, Path to) throws IOException;
  }

  private static final Mover RENAME = (from, to) -> Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);

  private DataDirLayout() {}

  /**
   * Brings every tenant's WAL of older layouts and formats to the current one (see the class
   * comment); returns the tenants moved or converted. A no-op on a current (or new) data directory.
   *
   * @throws IOException when a move fails (nothing is lost: what was not moved stays at the old
   *     place and the next start retries), or when a tenant has a WAL at two places (a start of
   *     an older Weir after the migration): the message names both directories
   * @throws WalCorruptionException when a former-format WAL is corrupt in the middle
   */
  public static List<String> migrate(Path dataDir) throws IOException, WalCorruptionException {
    return migrate(dataDir, RENAME);
  }

  static List<String> migrate(Path dataDir, Mover mover) throws IOException, WalCorruptionException {
    List<String> moved = moveLegacyRoot(dataDir, mover);
    List<String> converted = FormerWalConversion.convertAll(dataDir.resolve(TSDB_ROOT), mover);
    java.util.TreeSet<String> all = new java.util.TreeSet<>(moved);
    all.addAll(converted);
    return List.copyOf(all);
  }

  /** Step 1: {@code <data-dir>/wal/<tenant>} to {@code tsdb/<tenant>/weir-wal}. */
  private static List<String> moveLegacyRoot(Path dataDir, Mover mover) throws IOException {
    Path legacy = dataDir.resolve(LEGACY_WAL_ROOT);
    if (!Files.isDirectory(legacy)) {
      return List.of();
    }
    Path tsdbRoot = dataDir.resolve(TSDB_ROOT);
    List<Path> old;
    try (Stream<Path> s = Files.list(legacy)) {
      old = s.filter(Files::isDirectory).sorted().toList();
    }
    List<String> moved = new ArrayList<>();
    for (Path from : old) {
      String tenant = from.getFileName().toString();
      Path tenantDir = TenantPaths.child(tsdbRoot, tenant);
      Path to = tenantDir.resolve(FORMER_WAL);
      if (Files.exists(to) || Files.exists(tenantDir.resolve(CONVERTING_WAL))
          || FormerWalConversion.hasData(tenantDir.resolve(WAL))) {
        if (isEmptyDir(from)) {
          Files.delete(from); // nothing was ever written there
          continue;
        }
        throw new IOException("tenant " + tenant + " has a WAL in the old place " + from + " and in the new place "
            + to + " (was an older Weir started on this data directory?); keep one: move the segments of the"
            + " older one away and restart");
      }
      boolean created = !Files.isDirectory(tenantDir);
      Files.createDirectories(tenantDir);
      if (created) {
        syncDir(tsdbRoot);
      }
      try {
        mover.move(from, to);
      } catch (AtomicMoveNotSupportedException e) {
        throw new IOException("cannot rename " + from + " to " + to + " (another file system?): move it by hand and"
            + " restart", e);
      }
      syncDir(tenantDir);
      syncDir(legacy);
      moved.add(tenant);
      log.info("msg=\"WAL moved to the tenant's TSDB directory\" user={} from={} to={}", tenant, from, to);
    }
    try {
      Files.delete(legacy);
      syncDir(dataDir);
    } catch (DirectoryNotEmptyException e) {
      log.warn("msg=\"old WAL directory kept: it holds files that are no tenant's WAL\" dir={}", legacy);
    }
    if (!moved.isEmpty()) {
      log.info("msg=\"data directory moved to the per-tenant layout\" tenants={} dir={}", moved.size(), tsdbRoot);
    }
    return moved;
  }

  static boolean isEmptyDir(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }

  static void syncDir(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
