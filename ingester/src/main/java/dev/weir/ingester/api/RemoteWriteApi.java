package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.ExemplarsWritten;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.PartialWriteException;
import dev.weir.ingester.push.ProducedOffsets;
import dev.weir.ingester.push.PushErrors;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import dev.weir.storage.wire.WireSeries;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /api/v1/push}: Prometheus remote write — 1.0 (a snappy block-compressed {@code
 * prometheus.WriteRequest}) and 2.0 ({@code Content-Type:
 * application/x-protobuf;proto=io.prometheus.write.v2.Request}), tenant from {@code
 * X-Scope-OrgID}. Answers as Prometheus expects: 2xx when stored (200 for 1.0, 204 for 2.0); 400
 * with the reason for client errors (the valid series are still stored); 429 for the tenant's rate
 * limit; 413 for a body, a decompressed size, or a series or sample count over the limits; 415 for
 * an encoding or a {@code proto} it does not speak; 5xx for server errors, so the client retries.
 *
 * <p>A 2.0 response carries {@code X-Prometheus-Remote-Write-Samples-Written}, {@code
 * -Histograms-Written} and {@code -Exemplars-Written} with what was stored, also on a 4xx for a
 * partly refused request. A 2.0 series with a symbol reference out of range, an odd {@code
 * labels_refs} length or an inconsistent histogram is refused on its own (counted under its
 * reason in {@code weir_discarded_samples_total}); the rest of the request is stored. Native
 * histograms are stored (the histograms header counts those the push did not refuse, also behind
 * a forwarding distributor through the {@code weir-refused-histograms} trailer); exemplars written
 * are those stored ({@link ExemplarsWritten}: an ingester's exemplar storage took them, behind a
 * classic distributor as its ingesters answered; in Kafka mode, those produced), so exemplars
 * refused, out of order, of a refused series, or of a tenant whose exemplar limit is 0 are not
 * counted, and a duplicate of a stored exemplar is (as Prometheus counts it); created
 * timestamps are read and ignored, as Prometheus does without its created-timestamp-zero-ingestion
 * feature.
 *
 * <p>In Kafka mode a 2xx carries {@code X-Weir-Produced-Offsets: partition:offset,...}, the last
 * record produced per partition, for read-your-writes queries ({@code X-Read-Consistency-Offsets}).
 *
 * <p>Thread-safe.
 */
public final class RemoteWriteApi {
  static final String PROTO_V1 = "prometheus.WriteRequest";
  static final String PROTO_V2 = "io.prometheus.write.v2.Request";
  static final String SAMPLES_WRITTEN = "X-Prometheus-Remote-Write-Samples-Written";
  static final String HISTOGRAMS_WRITTEN = "X-Prometheus-Remote-Write-Histograms-Written";
  static final String EXEMPLARS_WRITTEN = "X-Prometheus-Remote-Write-Exemplars-Written";
  private static final ThreadLocal<WireSeries> CURSOR = ThreadLocal.withInitial(WireSeries::new);

  private final PushHandler push;
  private final Tenants tenants;
  private final ApiLimits limits;
  private final IngesterMetrics metrics;
  private final RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(RemoteWriteApi.class),
      TimeUnit.SECONDS.toNanos(1), System::nanoTime);

  public RemoteWriteApi(PushHandler push, Tenants tenants, ApiLimits limits, IngesterMetrics metrics) {
    this.push = push;
    this.tenants = tenants;
    this.limits = limits;
    this.metrics = metrics;
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
    try {
      if (PROTO_V2.equals(proto(ex.header("Content-Type")))) {
        serveV2(ex, tenant);
        return;
      }
      WireBatch request = decode(ex);
      limits.checkWriteRequest(request.size(), request.samples());
      Map<Integer, Long> produced = ProducedOffsets.capture(() -> push.push(tenant, request));
      ex.respond(200, "text/plain", new byte[0], producedHeader(produced));
    } finally {
      // The thread keeps its batch's arrays and its cursor, not the request: a body over the
      // kept buffers' size (an array of its own) is garbage once the request is answered.
      WireBatch b = BATCH.get();
      if (b.capacity() > KEPT_BATCH_SERIES) {
        BATCH.remove(); // a large request does not pin its arrays in the handler thread
      } else {
        b.release();
      }
      CURSOR.get().release();
    }
  }

  /**
   * Each handler thread parses into one batch, request after request (the push does not keep it:
   * see {@link #decode}); its arrays (44 bytes per series) are kept for up to this many series.
   */
  static final int KEPT_BATCH_SERIES = 16 * 1024;

  private static final ThreadLocal<WireBatch> BATCH = ThreadLocal.withInitial(WireBatch::new);

  /** {@code X-Weir-Produced-Offsets} when the write went to Kafka, else no header. */
  static Map<String, String> producedHeader(Map<Integer, Long> produced) {
    return produced.isEmpty() ? Map.of() : Map.of(ReadLevel.PRODUCED_OFFSETS_HEADER, ReadLevel.formatOffsets(produced));
  }

  /**
   * The {@code proto} parameter of a remote write Content-Type: 1.0 when there is no header or no
   * parameter (Prometheus' rule), else the parameter.
   *
   * @throws ClientErrorException 415 for a proto other than the two remote write messages
   */
  static String proto(@Nullable String contentType) {
    if (contentType == null) {
      return PROTO_V1;
    }
    String[] parts = contentType.split(";");
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim();
      int eq = p.indexOf('=');
      if (eq > 0 && p.substring(0, eq).trim().toLowerCase(Locale.ROOT).equals("proto")) {
        String v = p.substring(eq + 1).trim().replace("\"", "");
        if (v.equals(PROTO_V1) || v.equals(PROTO_V2)) {
          return v;
        }
        throw new ClientErrorException("unsupported_protocol", "unsupported remote write proto \"" + v
            + "\" in Content-Type: send " + PROTO_V1 + " (1.0) or " + PROTO_V2 + " (2.0)", 415);
      }
    }
    return PROTO_V1;
  }

  /**
   * Snappy block format, then protobuf; sizes checked before allocating. The batch, and the
   * buffer it reads from, are the handler thread's, reused for its next request: the push copies
   * what it keeps (the head its samples and new series' labels, the Kafka writer its records)
   * before it returns.
   */
  WireBatch decode(HttpExchange ex) {
    SnappyBodies.Reused raw = SnappyBodies.uncompressReused(ex, limits.maxDecompressedBytes(),
        "--distributor.max-recv-msg-size");
    try {
      // Each series' labels are checked and hashed here, once (the push reads what this saved);
      // a broken series refuses the whole request before anything is stored. With the hashes
      // known up front, the push can warm its series lookups a block ahead.
      return WireBatch.parse(raw.array(), raw.length(), CURSOR.get(), BATCH.get());
    } catch (WireFormatException e) {
      throw new ClientErrorException("bad_data", "the body is not a remote write request (prometheus.WriteRequest): "
          + e.getMessage());
    }
  }

  private void serveV2(HttpExchange ex, String tenant) {
    byte[] raw = SnappyBodies.uncompress(ex.bodyBytes(), limits.maxDecompressedBytes(),
        "--distributor.max-recv-msg-size");
    PushErrors errors = new PushErrors(tenant, metrics, log);
    WireBatch batch;
    try {
      batch = WireBatch.parseV2(raw, CURSOR.get(), (i, problem, samples, histograms, exemplars) ->
          errors.addSeries(problem.reason(), samples, histograms, "series " + i + ": " + problem.getMessage()));
    } catch (WireFormatException e) {
      throw new ClientErrorException("bad_data", "the body is not a remote write 2.0 request (" + PROTO_V2 + "): "
          + e.getMessage());
    }
    limits.checkWriteRequest(batch.size(), batch.samples());
    long refusedBehind = 0;
    long histogramsRefusedBehind = 0;
    Map<Integer, Long> produced = new java.util.HashMap<>();
    // Exemplars are counted where they are stored (or produced), not as sent less refused: some
    // are dropped without an error (a tenant whose exemplar limit is 0, a refused series).
    ExemplarsWritten.Tally exemplarsWritten = new ExemplarsWritten.Tally();
    try {
      if (batch.size() > 0 || !batch.metadata().isEmpty()) {
        exemplarsWritten.during(() -> produced.putAll(ProducedOffsets.capture(() -> push.push(tenant, batch))));
      }
    } catch (PartialWriteException e) {
      refusedBehind = e.refused();
      histogramsRefusedBehind = e.refusedHistograms();
      errors.refusedElsewhere(e.reason(), e.refused(), e.getMessage());
    } catch (ClientErrorException e) {
      // Refused whole (rate limit, a process that takes no pushes): nothing was written.
      respondV2(ex, e.httpStatus(), e.getMessage(), 0, 0, 0, Map.of());
      return;
    }
    // The push counts refused histogram samples apart from the refused samples that include them.
    long histogramsRefused = Math.min(batch.histogramSamples(), histogramsRefusedBehind);
    long samplesWritten = Math.max(0, batch.floatSamples() - (refusedBehind - histogramsRefused));
    long histogramsWritten = batch.histogramSamples() - histogramsRefused;
    try {
      errors.throwIfAny();
    } catch (PartialWriteException e) {
      respondV2(ex, 400, e.getMessage(), samplesWritten, histogramsWritten, exemplarsWritten.count(), Map.of());
      return;
    }
    respondV2(ex, 204, null, samplesWritten, histogramsWritten, exemplarsWritten.count(),
        producedHeader(produced));
  }

  private static void respondV2(HttpExchange ex, int status, @Nullable String message, long samples,
      long histograms, long exemplars, Map<String, String> extraHeaders) {
    Map<String, String> headers = new java.util.HashMap<>(extraHeaders);
    headers.put(SAMPLES_WRITTEN, Long.toString(samples));
    headers.put(HISTOGRAMS_WRITTEN, Long.toString(histograms));
    headers.put(EXEMPLARS_WRITTEN, Long.toString(exemplars));
    byte[] body = message == null ? new byte[0] : (message + "\n").getBytes(StandardCharsets.UTF_8);
    ex.respond(status, "text/plain; charset=utf-8", body, headers);
  }
}
