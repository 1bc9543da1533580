package dev.weir.storage.tsdb;

import dev.weir.storage.errors.ClientErrorException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Resolves a tenant's directory under a root ({@code wal/}, {@code tsdb/}) and refuses any tenant
 * whose directory would not be a direct child of that root: empty, {@code .}, {@code ..}, a path
 * with a separator ({@code a/b}, {@code ../wal/victim}), an absolute path, or a NUL. The first line
 * of defence is tenant validation at the API; this one makes sure that a tenant that slipped
 * through can never read, write or delete outside its own directory.
 *
 * <p>Stateless.
 */
public final class TenantPaths {
  /** The {@code reason} under which a refused tenant is counted. */
  public static final String INVALID_TENANT = "invalid_tenant";

  private TenantPaths() {}

  /**
   * The directory of {@code tenant} under {@code root}.
   *
   * @throws ClientErrorException with reason {@link #INVALID_TENANT} when it is not a direct child
   */
  public static Path child(Path root, String tenant) {
    if (tenant.isEmpty() || tenant.equals(".") || tenant.equals("..") || tenant.indexOf('/') >= 0
        || tenant.indexOf('\\') >= 0 || tenant.indexOf('\0') >= 0) {
      throw invalid(tenant);
    }
    Path base = root.toAbsolutePath().normalize();
    Path dir;
    try {
      dir = base.resolve(tenant).normalize();
    } catch (InvalidPathException e) {
      throw invalid(tenant);
    }
    if (!base.equals(dir.getParent()) || !dir.getFileName().toString().equals(tenant)) {
      throw invalid(tenant);
    }
    return root.resolve(tenant);
  }

  private static ClientErrorException invalid(String tenant) {
    return new ClientErrorException(INVALID_TENANT, "tenant ID \"" + tenant.replace("\0", "\\0")
        + "\" cannot name a storage directory (it must be one path element, not '.' or '..')");
  }
}
