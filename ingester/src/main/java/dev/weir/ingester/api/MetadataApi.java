package dev.weir.ingester.api;

import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.storage.errors.ClientErrorException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /api/v1/metadata}: the tenant's metric metadata (type, help, unit per metric family)
 * in the Prometheus API shape; {@code limit} caps the number of metrics, {@code metric} selects one.
 */
public final class MetadataApi {
  private final Ingester ingester;
  private final Tenants tenants;

  public MetadataApi(Ingester ingester, Tenants tenants) {
    this.ingester = ingester;
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
    for (Map.Entry<String, MetricMetadata> e : ingester.metadata(tenant).entrySet()) {
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
