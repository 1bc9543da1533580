package dev.weir.ingester.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import io.netty.buffer.ByteBufInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /api/v1/import}: the inverse of {@code /api/v1/export}, one JSON object per line
 * ({@code {"metric":{"__name__":"x",...},"values":[1,2],"timestamps":[1700000000000,...]}}), so
 * data can be written with curl. The lines go through the same push path as gRPC and remote
 * write: same validation, errors and metrics. Answers 204 when everything was stored, 400 with
 * the reason otherwise (valid lines are still stored).
 *
 * <p>Thread-safe.
 */
public final class JsonImport {
  private static final JsonFactory JSON = new JsonFactory();

  private final PushHandler push;
  private final Tenants tenants;

  public JsonImport(PushHandler push, Tenants tenants) {
    this.push = push;
    this.tenants = tenants;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_import", Set.of("POST"), "/api/v1/import", this::serve);
  }

  private void serve(HttpExchange ex) throws IOException {
    String tenant = tenants.resolve(ex.header(Tenants.HEADER));
    WriteRequest.Builder req = WriteRequest.newBuilder();
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(new ByteBufInputStream(ex.body().duplicate()), StandardCharsets.UTF_8))) {
      String line;
      int n = 0;
      while ((line = in.readLine()) != null) {
        n++;
        if (!line.isBlank()) {
          req.addTimeseries(parseLine(line, n));
        }
      }
    }
    Map<Integer, Long> produced = ProducedOffsets.capture(() -> push.push(tenant, req.build()));
    ex.respond(204, "text/plain", new byte[0], RemoteWriteApi.producedHeader(produced));
  }

  static TimeSeries parseLine(String line, int lineNo) {
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    List<Double> values = new ArrayList<>();
    List<Long> timestamps = new ArrayList<>();
    try (JsonParser p = JSON.createParser(line)) {
      expect(p.nextToken() == JsonToken.START_OBJECT, "expected a JSON object", lineNo);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken t = p.nextToken();
        switch (field) {
          case "metric" -> {
            expect(t == JsonToken.START_OBJECT, "\"metric\" must be an object", lineNo);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String name = p.currentName();
              expect(p.nextToken() == JsonToken.VALUE_STRING, "label values must be strings", lineNo);
              ts.addLabels(Label.newBuilder().setName(name).setValue(p.getText()));
            }
          }
          case "values" -> {
            expect(t == JsonToken.START_ARRAY, "\"values\" must be an array", lineNo);
            while (p.nextToken() != JsonToken.END_ARRAY) {
              values.add(value(p, lineNo));
            }
          }
          case "timestamps" -> {
            expect(t == JsonToken.START_ARRAY, "\"timestamps\" must be an array", lineNo);
            while (p.nextToken() != JsonToken.END_ARRAY) {
              expect(p.currentToken() == JsonToken.VALUE_NUMBER_INT, "timestamps must be integers (ms)", lineNo);
              timestamps.add(p.getLongValue());
            }
          }
          default -> p.skipChildren();
        }
      }
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new ClientErrorException("bad_data", "line " + lineNo + ": malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "line " + lineNo + ": unreadable: " + e.getMessage());
    }
    expect(values.size() == timestamps.size(), "\"values\" and \"timestamps\" differ in length", lineNo);
    for (int i = 0; i < values.size(); i++) {
      ts.addSamples(Sample.newBuilder().setTimestamp(timestamps.get(i)).setValue(values.get(i)));
    }
    return ts.build();
  }

  private static double value(JsonParser p, int lineNo) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
      return p.getDoubleValue();
    }
    if (t == JsonToken.VALUE_STRING) {
      switch (p.getText()) {
        case "NaN" -> {
          return Double.NaN;
        }
        case "+Inf", "Inf" -> {
          return Double.POSITIVE_INFINITY;
        }
        case "-Inf" -> {
          return Double.NEGATIVE_INFINITY;
        }
        default -> { }
      }
    }
    throw new ClientErrorException("bad_data", "line " + lineNo + ": values must be numbers, \"NaN\" or \"±Inf\"");
  }

  private static void expect(boolean ok, String what, int lineNo) {
    if (!ok) {
      throw new ClientErrorException("bad_data", "line " + lineNo + ": " + what);
    }
  }
}
