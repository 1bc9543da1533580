package dev.weir.ingester.api;

import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.head.Exemplar;
import dev.weir.storage.tsdb.head.SeriesExemplars;
import dev.weir.storage.tsdb.labels.Matcher;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * {@code GET|POST /api/v1/query_exemplars}: the tenant's exemplars in Prometheus' response shape,
 *
 * <pre>{@code
 * {"status":"success","data":[{"seriesLabels":{...},
 *   "exemplars":[{"labels":{"trace_id":"..."},"value":"6","timestamp":1600096945.479}]}]}
 * }</pre>
 *
 * {@code query} is a series selector (as one {@code match[]} of {@code /api/v1/series}; Prometheus
 * takes the selectors out of a PromQL expression, Weir evaluates no PromQL), {@code start} and
 * {@code end} (inclusive, seconds or RFC 3339) default to all time. Thread-safe.
 */
public final class ExemplarsApi {
  /** Where exemplars come from: the local ingester, or the querier's ingesters. */
  @FunctionalInterface
  public interface Source {
    /** Exemplars of the series matching the selector, in label order, each series oldest first. */
    List<SeriesExemplars> exemplars(String tenant, long mint, long maxt, List<Matcher> selector);
  }

  private final Source source;
  private final Tenants tenants;

  public ExemplarsApi(Source source, Tenants tenants) {
    this.source = source;
    this.tenants = tenants;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_query_exemplars", Set.of("GET", "POST"), "/api/v1/query_exemplars", this::serve);
  }

  private void serve(HttpExchange ex) {
    String tenant = tenants.resolve(ex.header(Tenants.HEADER));
    long start = TimeParams.parse(ex.param("start"), Long.MIN_VALUE, "start");
    long end = TimeParams.parse(ex.param("end"), Long.MAX_VALUE, "end");
    if (end < start) {
      throw new ClientErrorException("bad_data", "end timestamp must not be before start time");
    }
    String query = ex.param("query");
    if (query == null || query.isEmpty()) {
      throw new ClientErrorException("bad_data", "invalid parameter \"query\": a series selector is required");
    }
    List<Matcher> selector = SelectorParser.parse(query);
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"status\":\"success\",\"data\":[");
    boolean firstSeries = true;
    for (SeriesExemplars s : source.exemplars(tenant, start, end, selector)) {
      w.raw(firstSeries ? "" : ",").raw("{\"seriesLabels\":").labels(s.seriesLabels()).raw(",\"exemplars\":[");
      firstSeries = false;
      boolean first = true;
      for (Exemplar e : s.exemplars()) {
        w.raw(first ? "" : ",").raw("{\"labels\":").labels(e.labels()).raw(",\"value\":").raw(quoted(e.value()))
            .raw(",\"timestamp\":").raw(BigDecimal.valueOf(e.timestamp()).movePointLeft(3).toPlainString()).raw('}');
        first = false;
      }
      w.raw("]}");
    }
    ex.respond(200, "application/json", w.raw("]}").toString().getBytes(StandardCharsets.UTF_8));
  }

  /** A value as Prometheus' API writes it: a JSON string. */
  private static String quoted(double v) {
    String t = new JsonWriter(new StringBuilder()).value(v).toString();
    return t.startsWith("\"") ? t : "\"" + t + "\"";
  }

  /**
   * Exemplars of the series matching any of the selectors, merged per series (an exemplar once,
   * by timestamp, value and labels), in label order: how several selectors or several ingesters'
   * answers are combined.
   */
  public static List<SeriesExemplars> merge(List<List<SeriesExemplars>> answers) {
    java.util.TreeMap<dev.weir.storage.tsdb.labels.Labels, java.util.TreeSet<Exemplar>> bySeries =
        new java.util.TreeMap<>();
    java.util.Comparator<Exemplar> order = java.util.Comparator.comparingLong(Exemplar::timestamp)
        .thenComparingDouble(Exemplar::value).thenComparing(Exemplar::labels);
    for (List<SeriesExemplars> a : answers) {
      for (SeriesExemplars s : a) {
        bySeries.computeIfAbsent(s.seriesLabels(), k -> new java.util.TreeSet<>(order)).addAll(s.exemplars());
      }
    }
    List<SeriesExemplars> out = new java.util.ArrayList<>(bySeries.size());
    bySeries.forEach((l, e) -> out.add(new SeriesExemplars(l, List.copyOf(e))));
    return out;
  }
}
