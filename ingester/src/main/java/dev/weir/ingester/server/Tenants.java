package dev.weir.ingester.server;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tenant.TenantIds;
import org.jspecify.annotations.Nullable;

/**
 * Resolves the tenant of a request from the {@code X-Scope-OrgID} header (gRPC metadata
 * {@code x-scope-orgid}). With multitenancy off every request belongs to the no-auth tenant,
 * {@code anonymous} by default, as in Mimir.
 *
 * <p>Thread-safe (immutable).
 */
public final class Tenants {
  public static final String HEADER = "X-Scope-OrgID";

  private final boolean multitenancy;
  private final String noAuthTenant;

  public Tenants(boolean multitenancy, String noAuthTenant) {
    this.multitenancy = multitenancy;
    this.noAuthTenant = noAuthTenant;
  }

  public boolean multitenancyEnabled() {
    return multitenancy;
  }

  /**
   * The tenant for a request.
   *
   * @throws ClientErrorException 401 when the header is missing, 400 when it is not a valid ID
   */
  public String resolve(@Nullable String header) {
    if (!multitenancy) {
      return noAuthTenant;
    }
    if (header == null || header.isEmpty()) {
      throw new ClientErrorException("missing_tenant",
          "no org id: the request has no " + HEADER + " header naming its tenant", 401);
    }
    String problem = validate(header);
    if (problem != null) {
      throw new ClientErrorException("invalid_tenant", "invalid tenant ID \"" + header + "\": " + problem);
    }
    return header;
  }

  /** Mimir's tenant ID rules ({@link TenantIds}); null when valid. */
  static @Nullable String validate(String id) {
    return TenantIds.problem(id);
  }

  /** Flag definitions for {@link Tenants}. */
  public static final class Flags {
    private final Flag<Boolean> multitenancy;
    private final Flag<String> noAuthTenant;

    public Flags(FlagSet fs) {
      multitenancy = fs.bool("auth.multitenancy-enabled", true,
          "When true, every request must name its tenant in the X-Scope-OrgID header.");
      noAuthTenant = fs.string("auth.no-auth-tenant", "anonymous",
          "Tenant that owns all data when multitenancy is disabled.");
    }

    public Tenants build() throws ConfigException {
      String problem = validate(noAuthTenant.get());
      if (noAuthTenant.get().isEmpty() || problem != null) {
        throw new ConfigException("auth.no-auth-tenant is not a valid tenant ID: "
            + (problem == null ? "empty" : problem));
      }
      return new Tenants(multitenancy.get(), noAuthTenant.get());
    }
  }
}
