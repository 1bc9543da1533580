package dev.weir.storage.tsdb;

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
 * Where a data directory keeps each tenant's storage, and the start-up move from the old layout.
 *
 * <pre>
 * &lt;data-dir&gt;/tsdb/&lt;tenant&gt;/             one TSDB directory per tenant (Mimir's layout)
 *     01H…/                            blocks, Prometheus' format
 *     weir-wal/                        Weir's WAL: segments 00000000…, checkpoint.NNNNNNNN/
 *     wal/                             empty: Prometheus' WAL directory, so promtool opens the dir
 *     shipper.json                     blocks already uploaded
 * </pre>
 *
 * <p>Weir's WAL is not in Prometheus' WAL format (its records are framed with a magic byte, not
 * in 32 KiB pages, and its record payloads differ), so it does not live in {@code wal/}: promtool
 * would read it as a corrupt Prometheus WAL and refuse the whole directory. {@code wal/} is an
 * empty, valid Prometheus WAL instead: {@code promtool tsdb dump} and {@code analyze} work on a
 * live tenant directory and see its blocks, not its head.
 *
 * <p>The old layout kept the WAL apart, in {@code <data-dir>/wal/<tenant>/}. {@link #migrate}
 * moves each such directory to {@code <data-dir>/tsdb/<tenant>/weir-wal} with one rename (atomic
 * on one file system), so a kill -9 at any point leaves every tenant's WAL either entirely at the
 * old place or entirely at the new one, and the next start moves the rest: the rename order is
 * the marker. Order per tenant: create the tenant directory and fsync its parent, rename, fsync
 * both parents; at the end the empty old root is removed.
 *
 * <p>Stateless; call {@link #migrate} before opening any tenant.
 */
public final class DataDirLayout {
  private static final Logger log = LoggerFactory.getLogger(DataDirLayout.class);

  /** Under the data directory: one directory per tenant. */
  public static final String TSDB_ROOT = "tsdb";
  /** Under a tenant's directory: Weir's WAL. */
  public static final String WAL = "weir-wal";
  /** Under a tenant's directory: the empty Prometheus WAL that promtool requires. */
  public static final String PROMETHEUS_WAL = "wal";
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
   * Moves every tenant's WAL of the old layout into its TSDB directory; returns the tenants
   * moved. A no-op on a data directory in the new layout (or a new one).
   *
   * @throws IOException when a move fails (nothing is lost: what was not moved stays at the old
   *     place and the next start retries), or when a tenant has a WAL at both places (a start of
   *     an older Weir after the migration): the message names both directories
   */
  public static List<String> migrate(Path dataDir) throws IOException {
    return migrate(dataDir, RENAME);
  }

  static List<String> migrate(Path dataDir, Mover mover) throws IOException {
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
      Path to = tenantDir.resolve(WAL);
      if (Files.exists(to)) {
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

  /**
   * Creates the tenant's empty Prometheus WAL directory when it is missing (idempotent; nothing to
   * make durable: it holds nothing and is recreated at every open).
   */
  static void createPrometheusWal(Path tenantDir) throws IOException {
    Files.createDirectories(tenantDir.resolve(PROMETHEUS_WAL));
  }

  private static boolean isEmptyDir(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }

  private static void syncDir(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
