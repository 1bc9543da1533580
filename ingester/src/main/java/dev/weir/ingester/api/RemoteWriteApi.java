package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /api/v1/push}: Prometheus remote write 1.0 — a snappy (block format) compressed
 * {@code prometheus.WriteRequest}, tenant from {@code X-Scope-OrgID}. Answers as Prometheus
 * expects: 200 when stored; 400 with the reason for client errors (the valid series are still
 * stored); 429 for the tenant's rate limit; 413 for a body, a decompressed size, or a series or
 * sample count over the limits; 415 for an encoding or protocol version it does not speak; 5xx
 * for server errors, so the client retries. In Kafka mode a 200 carries {@code
 * X-Weir-Produced-Offsets: partition:offset,...}, the last record produced per partition, for
 * read-your-writes queries ({@code X-Read-Consistency-Offsets}).
 *
 * <p>Thread-safe.
 */
public final class RemoteWriteApi {
  private final PushHandler push;
  private final Tenants tenants;
  private final ApiLimits limits;

  public RemoteWriteApi(PushHandler push, Tenants tenants, ApiLimits limits) {
    this.push = push;
    this.tenants = tenants;
    this.limits = limits;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_push", Set.of("POST"), "/api/v1/push", this::serve);
  }

  private void serve(HttpExchange ex) {
    String tenant = tenants.resolve(ex.header(Tenants.HEADER));
    String encoding = ex.header("Content-Encoding");
    if (encoding != null && !encoding.equalsIgnoreCase("snappy")) {
      throw new ClientErrorException("unsupported_encoding", "unsupported Content-Encoding \"" + encoding
          + "\": remote write bodies are snappy-compressed", 415);
    }
    String type = ex.header("Content-Type");
    if (type != null && type.toLowerCase(Locale.ROOT).contains("io.prometheus.write.v2")) {
      throw new ClientErrorException("unsupported_protocol", "remote write 2.0 is not supported: send remote write"
          + " 1.0 (prometheus.WriteRequest)", 415);
    }
    WireBatch request = decode(ex.bodyBytes());
    limits.checkWriteRequest(request.size(), request.samples());
    Map<Integer, Long> produced = ProducedOffsets.capture(() -> push.push(tenant, request));
    ex.respond(200, "text/plain", new byte[0], producedHeader(produced));
  }

  /** {@code X-Weir-Produced-Offsets} when the write went to Kafka, else no header. */
  static Map<String, String> producedHeader(Map<Integer, Long> produced) {
    return produced.isEmpty() ? Map.of() : Map.of(ReadLevel.PRODUCED_OFFSETS_HEADER, ReadLevel.formatOffsets(produced));
  }

  /** Snappy block format, then protobuf; sizes checked before allocating. */
  WireBatch decode(byte[] body) {
    byte[] raw = SnappyBodies.uncompress(body, limits.maxDecompressedBytes(), "--distributor.max-recv-msg-size");
    try {
      // Labels and samples are checked as the ingester reads them (a broken series refuses
      // the whole request before anything is stored), so the bytes are walked once.
      return WireBatch.scan(raw);
    } catch (WireFormatException e) {
      throw new ClientErrorException("bad_data", "the body is not a remote write request (prometheus.WriteRequest): "
          + e.getMessage());
    }
  }
}
