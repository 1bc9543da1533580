package dev.weir.ingester.api;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * {@code POST /otlp/v1/metrics}: OTLP/HTTP metrics ({@code ExportMetricsServiceRequest}) as
 * protobuf ({@code application/x-protobuf}) or JSON ({@code application/json}), optionally
 * {@code Content-Encoding: gzip}; tenant from {@code X-Scope-OrgID}. Converted by
 * {@link OtlpTranslator} and handed to the same push path as remote write. Answers in the
 * request's encoding: 200 with an empty {@code ExportMetricsServiceResponse} when everything was
 * stored; otherwise a {@code google.rpc.Status} with the reason — 400 when part was refused (the
 * rest is stored, the refused points are counted in {@code weir_discarded_samples_total} by
 * reason), 413 for a body over {@code --distributor.max-recv-msg-size} after decompression or
 * over the per-request series and sample limits, 415 for another content type or encoding, 429
 * for the rate limit, 5xx for server errors (the exporter retries). In Kafka mode a 200 carries
 * {@code X-Weir-Produced-Offsets}, as remote write does.
 *
 * <p>Thread-safe.
 */
public final class OtlpApi {
  private static final String PROTOBUF = "application/x-protobuf";
  private static final String JSON = "application/json";
  private static final int MAX_REASONS_IN_MESSAGE = 5;

  private final PushHandler push;
  private final Tenants tenants;
  private final ApiLimits limits;
  private final OtlpTranslator translator;
  private final IngesterMetrics metrics;

  public OtlpApi(PushHandler push, Tenants tenants, ApiLimits limits, OtlpTranslator translator,
      IngesterMetrics metrics) {
    this.push = push;
    this.tenants = tenants;
    this.limits = limits;
    this.translator = translator;
    this.metrics = metrics;
  }

  public void register(HttpRouter router) {
    router.add("otlp_v1_metrics", Set.of("POST"), "/otlp/v1/metrics", this::serve);
  }

  private void serve(HttpExchange ex) {
    String type = ex.header("Content-Type");
    boolean json = type != null && type.toLowerCase(Locale.ROOT).startsWith(JSON);
    try {
      if (type == null || !(json || type.toLowerCase(Locale.ROOT).startsWith(PROTOBUF))) {
        throw new ClientErrorException("unsupported_media_type", "unsupported Content-Type \"" + type
            + "\": send OTLP metrics as application/x-protobuf or application/json", 415);
      }
      String tenant = tenants.resolve(ex.header(Tenants.HEADER));
      ExportMetricsServiceRequest request = parse(body(ex), json);
      OtlpTranslator.Result result = translator.translate(request);
      WriteRequest write = result.request();
      long samples = 0;
      for (var ts : write.getTimeseriesList()) {
        samples += ts.getSamplesCount();
      }
      limits.checkWriteRequest(write.getTimeseriesCount(), samples);
      ClientErrorException pushError = null;
      Map<Integer, Long> produced = Map.of();
      if (write.getTimeseriesCount() > 0) {
        try {
          produced = ProducedOffsets.capture(() -> push.push(tenant, write));
        } catch (ClientErrorException e) {
          pushError = e;
        }
      }
      if (!result.refusals().isEmpty()) {
        throw refused(tenant, result.refusals(), pushError);
      }
      if (pushError != null) {
        throw pushError;
      }
      respond(ex, 200, ExportMetricsServiceResponse.getDefaultInstance(), json,
          RemoteWriteApi.producedHeader(produced));
    } catch (ClientErrorException e) {
      respond(ex, e.httpStatus(), com.google.rpc.Status.newBuilder().setCode(rpcCode(e.httpStatus()))
          .setMessage(e.getMessage()).build(), json, Map.of());
    }
  }

  /** Counts the refused points by reason and names them in one 400. */
  private ClientErrorException refused(String tenant, List<OtlpTranslator.Refusal> refusals,
      ClientErrorException pushError) {
    Map<String, Integer> byReason = new LinkedHashMap<>();
    for (OtlpTranslator.Refusal r : refusals) {
      byReason.merge(r.reason(), r.points(), Integer::sum);
    }
    byReason.forEach((reason, n) -> metrics.discarded(tenant, reason, n));
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < refusals.size() && i < MAX_REASONS_IN_MESSAGE; i++) {
      parts.add(refusals.get(i).message());
    }
    String more = refusals.size() > MAX_REASONS_IN_MESSAGE
        ? " (and " + (refusals.size() - MAX_REASONS_IN_MESSAGE) + " more)" : "";
    String message = "some OTLP metrics were not stored, the rest were: " + String.join("; ", parts) + more
        + (pushError == null ? "" : "; " + pushError.getMessage());
    return new ClientErrorException(refusals.get(0).reason(), message, 400);
  }

  /** The body, gunzipped when asked, never more than {@code --distributor.max-recv-msg-size} bytes. */
  private byte[] body(HttpExchange ex) {
    byte[] raw = ex.bodyBytes();
    String encoding = ex.header("Content-Encoding");
    if (encoding == null || encoding.isEmpty() || encoding.equalsIgnoreCase("identity")) {
      if (raw.length > limits.maxDecompressedBytes()) {
        throw tooLarge();
      }
      return raw;
    }
    if (!encoding.equalsIgnoreCase("gzip")) {
      throw new ClientErrorException("unsupported_encoding", "unsupported Content-Encoding \"" + encoding
          + "\": OTLP bodies may be gzip or uncompressed", 415);
    }
    try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(raw))) {
      ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(raw.length * 4, limits.maxDecompressedBytes()));
      byte[] buf = new byte[64 << 10];
      int n;
      while ((n = in.read(buf)) > 0) {
        if (out.size() + n > limits.maxDecompressedBytes()) {
          throw tooLarge();
        }
        out.write(buf, 0, n);
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the gzip body is corrupt or truncated: " + e.getMessage());
    }
  }

  private ClientErrorException tooLarge() {
    return new ClientErrorException("request_too_large", "the OTLP body is larger than the limit of "
        + limits.maxDecompressedBytes() + " bytes (--distributor.max-recv-msg-size)", 413);
  }

  private static ExportMetricsServiceRequest parse(byte[] body, boolean json) {
    try {
      if (json) {
        ExportMetricsServiceRequest.Builder b = ExportMetricsServiceRequest.newBuilder();
        JsonFormat.parser().ignoringUnknownFields().merge(new String(body, StandardCharsets.UTF_8), b);
        return b.build();
      }
      return ExportMetricsServiceRequest.parseFrom(body);
    } catch (InvalidProtocolBufferException e) {
      throw new ClientErrorException("bad_data", "the body is not an OTLP ExportMetricsServiceRequest ("
          + (json ? "JSON" : "protobuf") + "): " + e.getMessage());
    }
  }

  private static void respond(HttpExchange ex, int status, Message message, boolean json,
      Map<String, String> headers) {
    if (json) {
      String text;
      try {
        text = JsonFormat.printer().omittingInsignificantWhitespace().print(message);
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException(e);
      }
      ex.respond(status, JSON, text.getBytes(StandardCharsets.UTF_8), headers);
    } else {
      ex.respond(status, PROTOBUF, message.toByteArray(), headers);
    }
  }

  /** The google.rpc.Code for an HTTP status, as OTLP/HTTP error bodies carry it. */
  private static int rpcCode(int httpStatus) {
    return switch (httpStatus) {
      case 400, 413, 415 -> 3; // INVALID_ARGUMENT
      case 401 -> 16; // UNAUTHENTICATED
      case 429 -> 8; // RESOURCE_EXHAUSTED
      default -> 2; // UNKNOWN
    };
  }
}
