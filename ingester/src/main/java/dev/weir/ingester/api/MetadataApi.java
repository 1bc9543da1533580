package dev.weir.ingester.api;

import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.storage.errors.ClientErrorException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;

/**
 * {@code GET /api/v1/metadata}: the tenant's metric metadata (type, help, unit per metric family)
 * in the Prometheus API shape; {@code limit} caps the number of metrics, {@code metric} selects one.
 */
public final class MetadataApi {
  /** Where a tenant's metadata comes from: the local ingester, or the querier's ingesters. */
  @FunctionalInterface
  public interface Source {
    /** The tenant's metadata by metric family name, sorted. */
    SortedMap<String, MetricMetadata> metadata(String tenant);
  }

  private final Source source;
  private final Tenants tenants;

  public MetadataApi(Source source, Tenants tenants) {
    this.source = source;
    this.tenants = tenants;
  }

  public void register(HttpRouter router) {
    router.get("api_v1_metadata", "/api/v1/metadata", this::serve);
  }

  private void serve(HttpExchange ex) {
    String tenant = tenants.resolve(ex.header(Tenants.HEADER));
    int limit = -1;
    String l = ex.param("limit");
    if (l != null && !l.isEmpty()) {
      try {
        limit = Integer.parseInt(l);
      } catch (NumberFormatException e) {
        throw new ClientErrorException("bad_data", "invalid parameter \"limit\": " + l);
      }
    }
    String metric = ex.param("metric");
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"status\":\"success\",\"data\":{");
    int n = 0;
    for (Map.Entry<String, MetricMetadata> e : source.metadata(tenant).entrySet()) {
      if (metric != null && !metric.isEmpty() && !metric.equals(e.getKey())) {
        continue;
      }
      if (limit >= 0 && n >= limit) {
        break;
      }
      MetricMetadata m = e.getValue();
      w.raw(n++ > 0 ? "," : "").string(e.getKey()).raw(":[{\"type\":")
          .string(m.getType().name().toLowerCase(Locale.ROOT)).raw(",\"help\":").string(m.getHelp())
          .raw(",\"unit\":").string(m.getUnit()).raw("}]");
    }
    ex.respond(200, "application/json", w.raw("}}").toString().getBytes(StandardCharsets.UTF_8));
  }
}
