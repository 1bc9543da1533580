package dev.weir.ingester.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Reads series back through {@code /api/v1/export} for exact verification in tests. */
public final class ExportClient {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final String baseUrl;

  public ExportClient(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  /** One exported series: its labels as text and its samples. */
  public record Series(String labels, List<Long> timestamps, List<Double> values) {}

  /** Series by their label text ({@code {a="b",...}} in label order). */
  public Map<String, Series> export(String tenant, String selector) throws Exception {
    return export(tenant, selector, new String[0]);
  }

  /** As {@link #export(String, String)}, with further request headers as name, value pairs. */
  public Map<String, Series> export(String tenant, String selector, String... headers) throws Exception {
    String url = baseUrl + "/api/v1/export?match[]=" + URLEncoder.encode(selector, StandardCharsets.UTF_8);
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(java.time.Duration.ofMinutes(2));
    if (tenant != null) {
      b.header("X-Scope-OrgID", tenant);
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("export failed: " + r.statusCode() + " " + r.body());
    }
    Map<String, Series> out = new TreeMap<>();
    for (String line : r.body().split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode n = JSON.readTree(line);
      StringBuilder labels = new StringBuilder("{");
      for (Iterator<Map.Entry<String, JsonNode>> it = n.get("metric").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        labels.append(labels.length() > 1 ? "," : "").append(e.getKey()).append("=\"")
            .append(e.getValue().asText()).append('"');
      }
      labels.append('}');
      List<Long> ts = new ArrayList<>();
      n.get("timestamps").forEach(t -> ts.add(t.asLong()));
      List<Double> vs = new ArrayList<>();
      n.get("values").forEach(v -> vs.add(v.isNumber() ? v.asDouble() : Double.parseDouble(
          v.asText().replace("+Inf", "Infinity").replace("-Inf", "-Infinity"))));
      if (out.put(labels.toString(), new Series(labels.toString(), ts, vs)) != null) {
        throw new IllegalStateException("series exported twice: " + labels);
      }
    }
    return out;
  }
}
