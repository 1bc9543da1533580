package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.ingester.UserLagResponse;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.head.TenantHead;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /api/v1/user_lag}: how fresh the tenant's ({@code X-Scope-OrgID}) data is, per Kafka
 * partition holding its series — records and seconds not yet consumed, the newest sample appended
 * for it, whether the partition's owner is ready — in the Prometheus API's shape:
 *
 * <pre>{@code
 * {"status":"success","data":{"tenant":"team-a","partitions":[{"partition":3,
 *   "owner":"ingester-zone-a-3","ready":true,"series":120,"consumed_offset":1043,"end_offset":1043,
 *   "records_behind":0,"seconds_behind":0.412,"consumed_up_to":1764780000.123,
 *   "newest_sample_time":1764779999.5}]}}
 * }</pre>
 *
 * Times are Unix seconds, unknown values {@code null}. An ingester answers for its own partition
 * (none when the tenant has no series there); a querier asks the owner of every partition and lists
 * the ones holding the tenant's series, plus any it could not ask (with {@code "error"}). See
 * docs/operations.md, "Freshness". Thread-safe.
 */
public final class UserLag {
  /**
   * One partition's row.
   *
   * @param owner the instance that answered, or that would have
   * @param freshness null when the owner could not be asked
   * @param series the tenant's series in the owner's head; -1 unknown
   * @param newestSampleMillis the newest sample appended for the tenant; -1 none or unknown
   * @param error why the owner could not be asked, or null
   */
  public record Row(int partition, String owner, @Nullable PartitionFreshness freshness, long series,
      long newestSampleMillis, @Nullable String error) {}

  /** Where the rows come from: the local ingester, or a querier's partition owners. */
  @FunctionalInterface
  public interface Source {
    /** @throws ServerErrorException when nothing can be said (e.g. the ring cannot be read) */
    List<Row> rows(String tenant);
  }

  private final Source source;
  private final Tenants tenants;
  private final LongSupplier clock;

  public UserLag(Source source, Tenants tenants, LongSupplier clock) {
    this.source = source;
    this.tenants = tenants;
    this.clock = clock;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_user_lag", Set.of("GET"), "/api/v1/user_lag", this::serve);
  }

  private void serve(HttpExchange ex) {
    String tenant;
    try {
      tenant = tenants.resolve(ex.header(Tenants.HEADER));
    } catch (ClientErrorException e) {
      PrometheusHttpApi.respondError(ex, e.httpStatus(), e.httpStatus() == 400 ? "bad_data" : "client_error", e.getMessage());
      return;
    }
    List<Row> rows;
    try {
      rows = source.rows(tenant);
    } catch (ServerErrorException e) {
      PrometheusHttpApi.respondError(ex, 503, "unavailable", e.getMessage());
      return;
    }
    ex.respond(200, "application/json", json(tenant, rows, clock.getAsLong()).getBytes(StandardCharsets.UTF_8));
  }

  /** The response body. */
  static String json(String tenant, List<Row> rows, long nowMillis) {
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"status\":\"success\",\"data\":{\"tenant\":")
        .string(tenant).raw(",\"partitions\":[");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      if (i > 0) {
        w.raw(',');
      }
      PartitionFreshness f = r.freshness();
      w.raw("{\"partition\":").number(r.partition()).raw(",\"owner\":").string(r.owner());
      w.raw(",\"ready\":").raw(f != null && f.ready() ? "true" : "false");
      w.raw(",\"series\":");
      orNull(w, r.series());
      w.raw(",\"consumed_offset\":");
      orNull(w, f == null ? -1 : f.consumedOffset());
      w.raw(",\"end_offset\":");
      orNull(w, f == null ? -1 : f.endOffset());
      w.raw(",\"records_behind\":");
      orNull(w, f == null ? -1 : f.recordsBehind());
      w.raw(",\"seconds_behind\":");
      seconds(w, f == null || f.consumedUpToMillis() < 0 ? -1 : Math.max(0, nowMillis - f.consumedUpToMillis()));
      w.raw(",\"consumed_up_to\":");
      seconds(w, f == null ? -1 : f.consumedUpToMillis());
      w.raw(",\"newest_sample_time\":");
      seconds(w, r.newestSampleMillis());
      if (r.error() != null) {
        w.raw(",\"error\":").string(r.error());
      }
      w.raw('}');
    }
    return w.raw("]}}").toString();
  }

  private static void orNull(JsonWriter w, long v) {
    if (v < 0) {
      w.raw("null");
    } else {
      w.number(v);
    }
  }

  /** Milliseconds as seconds with three decimals, or null when negative (unknown). */
  static void seconds(JsonWriter w, long millis) {
    if (millis < 0) {
      w.raw("null");
    } else {
      w.raw(String.format(Locale.ROOT, "%d.%03d", millis / 1000, millis % 1000));
    }
  }

  /** The local ingester's rows: its partition, when the tenant has series here. */
  public static Source local(Ingester ingester, ReadConsistency consistency, String instanceId) {
    return tenant -> {
      UserLagResponse r = local(ingester, consistency, instanceId, tenant);
      List<Row> rows = new ArrayList<>();
      if (r.getSeries() > 0) {
        for (var p : r.getPartitionsList()) {
          rows.add(new Row(p.getPartition(), instanceId, QueryingIngesterService.fromProto(p), r.getSeries(),
              r.getNewestSampleMs(), null));
        }
      }
      return rows;
    };
  }

  /** What an ingester answers to {@code UserLag} for {@code tenant}. */
  static UserLagResponse local(Ingester ingester, ReadConsistency consistency, String instanceId, String tenant) {
    long series = 0;
    long newest = -1;
    TenantDb db = ingester.tsdb().existing(tenant);
    if (db != null) {
      TenantHead head = db.head();
      series = head.numSeries();
      newest = head.maxTime() == Long.MIN_VALUE ? -1 : head.maxTime();
    }
    return UserLagResponse.newBuilder().addAllPartitions(QueryingIngesterService.toProto(consistency.freshness()))
        .setSeries(series).setNewestSampleMs(newest).setInstanceId(instanceId).build();
  }
}
