package dev.weir.storage.bucket;

import dev.weir.storage.tsdb.block.Ulid;

/**
 * The names a bucket accepts, shared by every backend so that a tenant ID that one backend refuses
 * is refused by all: a tenant is one path segment that is not hidden (Prometheus and Mimir tools
 * skip dot-directories, and {@code ..} would escape the bucket's root), a block ID is a ULID, and a
 * file of a block is a relative path without {@code .} or {@code ..} segments.
 *
 * <p>Stateless.
 */
final class BlockPaths {
  private BlockPaths() {}

  static String checkTenant(String tenant) {
    if (tenant.isEmpty() || tenant.startsWith(".") || tenant.contains("/") || tenant.contains("\\")) {
      throw new IllegalArgumentException("tenant ID cannot name a bucket directory: " + tenant);
    }
    return tenant;
  }

  static String checkId(String id) {
    if (!Ulid.isUlid(id)) {
      throw new IllegalArgumentException("block ID is not a ULID: " + id);
    }
    return id;
  }

  /** A file of a block ({@code index}, {@code chunks/000001}), '/'-separated. */
  static String checkFile(String file) {
    if (file.isEmpty() || file.contains("\\")) {
      throw new IllegalArgumentException("not a file of the block: " + file);
    }
    for (String segment : file.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw new IllegalArgumentException("not a file of the block: " + file);
      }
    }
    return file;
  }
}
