package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.push.Validator;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Read endpoints in the shape of the Prometheus HTTP API ({@code /api/v1/series},
 * {@code /api/v1/labels}, {@code /api/v1/label/<name>/values}) plus {@code /api/v1/export}, which
 * streams every matching series as one JSON line ({@code {"metric":{...},"values":[...],
 * "timestamps":[...]}}, VictoriaMetrics' export format) for exact verification.
 *
 * <p>The tenant comes from {@code X-Scope-OrgID}; {@code X-Read-Consistency: strong} first waits
 * until every write accepted before the query is readable, {@code X-Read-Consistency-Offsets}
 * until the named writes are (Kafka mode, see {@link ReadLevel}). Every answer says how fresh it is
 * ({@link QueryFreshness}: a header, and warnings in the JSON). Errors are answered as
 * Prometheus does: {@code {"status":"error","errorType":"bad_data","error":"..."}}, with errorType
 * {@code bad_data} (400), {@code client_error} (other 4xx, e.g. a query limit's 422) or
 * {@code unavailable} (503: a server error, e.g. a querier's source failed). The data comes from a
 * {@link ReadSource}: the local ingester or the querier. Thread-safe.
 */
public final class PrometheusHttpApi {
  private static final String JSON = "application/json";
  private static final Set<String> GET_POST = Set.of("GET", "POST");

  private final ReadSource source;
  private final Tenants tenants;
  private final QueryFreshness freshness;

  /** @param freshness the {@link QueryFreshness#HEADER} header and the lag warnings or failure */
  public PrometheusHttpApi(ReadSource source, Tenants tenants, QueryFreshness freshness) {
    this.source = source;
    this.tenants = tenants;
    this.freshness = freshness;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_series", GET_POST, "/api/v1/series", ex -> guarded(ex, this::series));
    router.add("api_v1_labels", GET_POST, "/api/v1/labels", ex -> guarded(ex, this::labels));
    router.add("api_v1_label_name_values", Set.of("GET"), "/api/v1/label/{name}/values",
        ex -> guarded(ex, this::labelValues));
    router.add("api_v1_export", GET_POST, "/api/v1/export", ex -> guarded(ex, this::export));
  }

  private interface Endpoint {
    void serve(HttpExchange ex, ReadSource.Reader reader) throws Exception;
  }

  private void guarded(HttpExchange ex, Endpoint e) throws Exception {
    try {
      String tenant = tenants.resolve(ex.header(Tenants.HEADER));
      ReadLevel level = ReadLevel.parse(ex.header(ReadLevel.CONSISTENCY_HEADER), ex.header(ReadLevel.OFFSETS_HEADER));
      e.serve(ex, source.reader(tenant, level));
    } catch (ClientErrorException err) {
      if (ex.responded()) {
        throw err;
      }
      respondError(ex, err.httpStatus(), err.httpStatus() == 400 ? "bad_data" : "client_error", err.getMessage());
    } catch (ServerErrorException err) {
      if (ex.responded()) {
        throw err;
      }
      respondError(ex, 503, "unavailable", err.getMessage());
    }
  }

  /** A Prometheus API error: {@code {"status":"error","errorType":type,"error":message}}. */
  static void respondError(HttpExchange ex, int status, String type, @Nullable String message) {
    StringBuilder sb = new StringBuilder();
    new JsonWriter(sb).raw("{\"status\":\"error\",\"errorType\":").string(type)
        .raw(",\"error\":").string(String.valueOf(message)).raw('}');
    ex.respond(status, JSON, sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  private record Query(long start, long end, List<List<Matcher>> selectors) {}

  private static Query query(HttpExchange ex, boolean matchRequired) {
    long start = TimeParams.parse(ex.param("start"), Long.MIN_VALUE, "start");
    long end = TimeParams.parse(ex.param("end"), Long.MAX_VALUE, "end");
    if (end < start) {
      throw new ClientErrorException("bad_data", "end timestamp must not be before start time");
    }
    List<String> match = ex.paramList("match[]");
    if (match.isEmpty() && matchRequired) {
      throw new ClientErrorException("bad_data", "no match[] parameter provided");
    }
    List<List<Matcher>> selectors = new ArrayList<>();
    for (String m : match) {
      selectors.add(SelectorParser.parse(m));
    }
    return new Query(start, end, selectors);
  }

  private void series(HttpExchange ex, ReadSource.Reader reader) {
    Query q = query(ex, true);
    TreeMap<Labels, Boolean> found = new TreeMap<>();
    for (List<Matcher> sel : q.selectors()) {
      for (SeriesChunks s : reader.select(q.start(), q.end(), sel)) {
        if (s.samples(q.start(), q.end()).size() > 0) {
          found.put(s.labels(), Boolean.TRUE);
        }
      }
    }
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"status\":\"success\",\"data\":[");
    boolean first = true;
    for (Labels l : found.keySet()) {
      if (!first) {
        w.raw(',');
      }
      first = false;
      w.labels(l);
    }
    respondJson(ex, reader, w.raw("]"));
  }

  private void labels(HttpExchange ex, ReadSource.Reader reader) {
    Query q = query(ex, false);
    TreeSet<String> names = new TreeSet<>();
    if (q.selectors().isEmpty()) {
      names.addAll(reader.labelNames(q.start(), q.end(), List.of()));
    }
    for (List<Matcher> sel : q.selectors()) {
      names.addAll(reader.labelNames(q.start(), q.end(), sel));
    }
    respondJson(ex, reader, stringList(names));
  }

  private void labelValues(HttpExchange ex, ReadSource.Reader reader) {
    String name = ex.pathParam(0);
    if (!Validator.isValidLabelName(name)) {
      throw new ClientErrorException("bad_data", "invalid label name: \"" + name + "\"");
    }
    Query q = query(ex, false);
    TreeSet<String> values = new TreeSet<>();
    if (q.selectors().isEmpty()) {
      values.addAll(reader.labelValues(name, q.start(), q.end(), List.of()));
    }
    for (List<Matcher> sel : q.selectors()) {
      values.addAll(reader.labelValues(name, q.start(), q.end(), sel));
    }
    respondJson(ex, reader, stringList(values));
  }

  private void export(HttpExchange ex, ReadSource.Reader reader) throws Exception {
    Query q = query(ex, true);
    // Union of the selectors, each series once, in label order.
    TreeMap<Labels, SeriesChunks> found = new TreeMap<>();
    for (List<Matcher> sel : q.selectors()) {
      for (SeriesChunks s : reader.select(q.start(), q.end(), sel)) {
        found.putIfAbsent(s.labels(), s);
      }
    }
    QueryFreshness.Verdict verdict = freshness.check(reader.freshness());
    try (OutputStream out = ex.stream(200, "application/stream+json; charset=utf-8", verdict.headers())) {
      StringBuilder sb = new StringBuilder(4096);
      JsonWriter w = new JsonWriter(sb);
      for (SeriesChunks s : found.values()) {
        SeriesChunks.Samples samples = s.samples(q.start(), q.end());
        if (samples.size() == 0) {
          continue;
        }
        w.raw("{\"metric\":").labels(s.labels()).raw(",\"values\":[");
        double[] v = samples.values();
        for (int i = 0; i < v.length; i++) {
          if (i > 0) {
            w.raw(',');
          }
          w.value(v[i]);
        }
        w.raw("],\"timestamps\":[");
        long[] t = samples.timestamps();
        for (int i = 0; i < t.length; i++) {
          if (i > 0) {
            w.raw(',');
          }
          w.number(t[i]);
        }
        w.raw("]}\n");
        if (sb.length() >= 32 * 1024) {
          out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
          sb.setLength(0);
        }
      }
      out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
    }
  }

  private static JsonWriter stringList(Iterable<String> values) {
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"status\":\"success\",\"data\":[");
    boolean first = true;
    for (String v : values) {
      if (!first) {
        w.raw(',');
      }
      first = false;
      w.string(v);
    }
    return w.raw("]");
  }

  /**
   * Closes a success body whose data is written ({@code {"status":"success","data":...}}),
   * adding the freshness warnings, and answers it with the freshness header.
   */
  private void respondJson(HttpExchange ex, ReadSource.Reader reader, JsonWriter w) {
    QueryFreshness.Verdict verdict = freshness.check(reader.freshness());
    if (!verdict.warnings().isEmpty()) {
      w.raw(",\"warnings\":[");
      for (int i = 0; i < verdict.warnings().size(); i++) {
        if (i > 0) {
          w.raw(',');
        }
        w.string(verdict.warnings().get(i));
      }
      w.raw(']');
    }
    ex.respond(200, JSON, w.raw('}').toString().getBytes(StandardCharsets.UTF_8), verdict.headers());
  }
}
