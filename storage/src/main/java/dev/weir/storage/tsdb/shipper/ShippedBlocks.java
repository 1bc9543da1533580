package dev.weir.storage.tsdb.shipper;

import dev.weir.storage.tsdb.RetentionGate;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.block.Block;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which local blocks of each tenant are in the bucket: read lazily from the tenant's
 * {@code shipper.json} ({@link ShipperFile}) and kept in memory. An upload is recorded in memory
 * first (it is in the bucket, whatever happens to the file), then written to the file; a file
 * that could not be written costs at most a bucket lookup after a restart, never a second upload.
 *
 * <p>As the storage's {@link RetentionGate} it lets retention delete a block only once it is
 * shipped (or when it is not a block the shipper ships).
 *
 * <p>Thread-safe: the shipper thread records uploads, the storage's background thread asks.
 */
public final class ShippedBlocks implements RetentionGate {
  private static final Logger log = LoggerFactory.getLogger(ShippedBlocks.class);

  private final Function<String, Path> tenantDir;
  /** Tenant → uploaded block IDs (immutable sets, replaced on change). */
  private final ConcurrentHashMap<String, Set<String>> uploaded = new ConcurrentHashMap<>();

  /** Files live in each tenant's blocks directory, {@code <data-dir>/tsdb/<tenant>/shipper.json}. */
  public ShippedBlocks(TsdbConfig config) {
    this(config::blocksDir);
  }

  ShippedBlocks(Function<String, Path> tenantDir) {
    this.tenantDir = tenantDir;
  }

  /** The tenant's uploaded block IDs. */
  public Set<String> uploaded(String tenant) {
    return uploaded.computeIfAbsent(tenant, this::load);
  }

  private Set<String> load(String tenant) {
    Path dir = tenantDir.apply(tenant);
    try {
      return Set.copyOf(ShipperFile.read(dir));
    } catch (IOException e) {
      // Like Mimir: start over with an empty list. Blocks already in the bucket are found there
      // by the shipper's lookup before uploading, so none is uploaded twice.
      log.warn("msg=\"cannot read the shipper file; starting with an empty list\" user={} err=\"{}\"", tenant,
          e.getMessage());
      return Set.of();
    }
  }

  /**
   * Records an upload: at once in memory, then durably in the tenant's file.
   *
   * @throws IOException when the file cannot be written (the upload stays recorded in memory)
   */
  void markUploaded(String tenant, String id) throws IOException {
    Set<String> now = uploaded.compute(tenant, (t, old) -> {
      Set<String> s = new TreeSet<>(old == null ? load(t) : old);
      s.add(id);
      return Set.copyOf(s);
    });
    ShipperFile.write(tenantDir.apply(tenant), now);
  }

  /**
   * Forgets uploaded blocks that are no longer on disk (deleted by retention), so the file does
   * not grow forever; writes the file only when something was dropped.
   *
   * @throws IOException when the file cannot be written
   */
  void retainOnly(String tenant, Set<String> local) throws IOException {
    Set<String> before = uploaded(tenant);
    if (local.containsAll(before)) {
      return;
    }
    Set<String> now = uploaded.compute(tenant, (t, old) -> {
      Set<String> s = new TreeSet<>(old == null ? before : old);
      s.retainAll(local);
      return Set.copyOf(s);
    });
    ShipperFile.write(tenantDir.apply(tenant), now);
  }

  @Override
  public boolean mayDelete(String tenant, Block block) {
    if (uploaded(tenant).contains(block.meta().ulid())) {
      return true;
    }
    try {
      return !HeadBlocks.isHeadBlock(block);
    } catch (IOException e) {
      return false; // unreadable meta.json: keep the block, the shipper reports the problem
    }
  }
}
