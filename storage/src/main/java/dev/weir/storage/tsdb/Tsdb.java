package dev.weir.storage.tsdb;

import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Interner;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The storage of all tenants: one {@link TenantHead} per tenant, created on its first write.
 * Label strings are interned across tenants, since most names and many values are shared.
 *
 * <p>Thread-safe.
 */
public final class Tsdb {
  private final HeadConfig headConfig;
  private final LongSupplier wallClock;
  private final Interner interner = new Interner();
  private final ConcurrentHashMap<String, TenantHead> heads = new ConcurrentHashMap<>();

  public Tsdb(HeadConfig headConfig, LongSupplier wallClock) {
    this.headConfig = headConfig;
    this.wallClock = wallClock;
  }

  /** The head of a tenant, created when missing. */
  public TenantHead head(String tenant) {
    return heads.computeIfAbsent(tenant, t -> new TenantHead(t, headConfig, interner, wallClock));
  }

  /** The head of a tenant, or null when it never wrote. */
  public @Nullable TenantHead existingHead(String tenant) {
    return heads.get(tenant);
  }

  /** Tenants with a head, sorted. */
  public List<String> tenants() {
    List<String> out = new ArrayList<>(heads.keySet());
    Collections.sort(out);
    return out;
  }

  public Interner interner() {
    return interner;
  }
}
