package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.CodedInputStream;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Chunk;
import dev.weir.proto.prompb.ChunkedReadResponse;
import dev.weir.proto.prompb.ChunkedSeries;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.QueryResult;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.ReadResponse;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.chunk.XorIterator;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Prometheus' HTTP protocols against the real binary: remote write (captured Prometheus bodies,
 * malformed and abusive bodies, per-tenant rate limits with a runtime config reloaded while
 * running), remote read in both response types, and the metadata API.
 */
class RemoteApiIT {
  static final String FIXTURES = "/fixtures/prometheus-2.42/";
  static final int MAX_SERIES_PER_REQUEST = 2_000;
  static final int MAX_FETCHED_SERIES = 5_000;
  static final int MAX_BODY = 8 << 20;

  @TempDir static Path dir;
  static WeirProcess weir;
  static Path runtimeConfig;
  static final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    runtimeConfig = dir.resolve("runtime.yaml");
    Files.writeString(runtimeConfig, overrides(1, 100));
    weir = WeirProcess.start(dir.resolve("weir"), "--runtime-config.file=" + runtimeConfig,
        "--runtime-config.reload-period=1s",
        "--distributor.max-series-per-request=" + MAX_SERIES_PER_REQUEST,
        "--querier.max-fetched-series-per-query=" + MAX_FETCHED_SERIES,
        "--server.http-max-request-body-bytes=" + MAX_BODY);
  }

  @AfterAll
  static void stop() throws Exception {
    if (weir != null) {
      weir.close();
    }
  }

  static String overrides(double rate, int burst) {
    return "overrides:\n  limited:\n    ingestion_rate: " + rate + "\n    ingestion_burst_size: " + burst + "\n";
  }

  record Resp(int status, byte[] body, java.net.http.HttpHeaders headers) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  static Resp post(String path, String tenant, byte[] body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(weir.httpUrl() + path))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (tenant != null) {
      b.header("X-Scope-OrgID", tenant);
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    return new Resp(r.statusCode(), r.body(), r.headers());
  }

  /** A POST whose headers announce {@code contentLength} bytes that are never sent; the raw answer. */
  static String headersOnlyPost(String path, String tenant, long contentLength) throws Exception {
    URI uri = URI.create(weir.httpUrl());
    try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(30_000);
      String head = "POST " + path + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\nX-Scope-OrgID: " + tenant
          + "\r\nContent-Encoding: snappy\r\nContent-Length: " + contentLength + "\r\n\r\n";
      socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      // The server answers and closes the connection: read to the end.
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static Resp write(String tenant, WriteRequest req) throws Exception {
    return post("/api/v1/push", tenant, Snappy.compress(req.toByteArray()), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Write-Version", "0.1.0");
  }

  static byte[] resource(String name) throws Exception {
    try (InputStream in = RemoteApiIT.class.getResourceAsStream(FIXTURES + name)) {
      assertThat(in).as("fixture %s", name).isNotNull();
      return in.readAllBytes();
    }
  }

  static TimeSeries series(String name, int id, long t0, int samples, long step) {
    TimeSeries.Builder ts = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("id").setValue(String.format("%05d", id)))
        .addLabels(Label.newBuilder().setName("job").setValue("test"));
    for (int i = 0; i < samples; i++) {
      ts.addSamples(Sample.newBuilder().setTimestamp(t0 + i * step).setValue(id * 1000.0 + i * 0.5));
    }
    return ts.build();
  }

  /** Labels as text, e.g. {@code {__name__="up",job="x"}}, the key {@link ExportClient} uses. */
  static String key(List<Label> labels) {
    StringBuilder sb = new StringBuilder("{");
    for (Label l : labels) {
      sb.append(sb.length() > 1 ? "," : "").append(l.getName()).append("=\"").append(l.getValue()).append('"');
    }
    return sb.append('}').toString();
  }

  /** Every (timestamp, value bits) of the series in {@code [mint, maxt]}, by series key. */
  static Map<String, List<long[]>> samplesByKey(List<TimeSeries> series, long mint, long maxt) {
    Map<String, List<long[]>> out = new TreeMap<>();
    for (TimeSeries ts : series) {
      List<long[]> list = out.computeIfAbsent(key(ts.getLabelsList()), k -> new ArrayList<>());
      for (Sample s : ts.getSamplesList()) {
        if (s.getTimestamp() >= mint && s.getTimestamp() <= maxt) {
          list.add(new long[] {s.getTimestamp(), Double.doubleToRawLongBits(s.getValue())});
        }
      }
    }
    out.values().forEach(l -> l.sort((a, b) -> Long.compare(a[0], b[0])));
    out.values().removeIf(List::isEmpty);
    return out;
  }

  static Map<String, List<String>> printable(Map<String, List<long[]>> m) {
    Map<String, List<String>> out = new TreeMap<>();
    m.forEach((k, v) -> out.put(k, v.stream().map(a -> a[0] + "=" + Long.toHexString(a[1])).toList()));
    return out;
  }

  static ReadResponse readSamples(String tenant, ReadRequest req) throws Exception {
    Resp r = post("/api/v1/read", tenant, Snappy.compress(req.toByteArray()), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Read-Version", "0.1.0");
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Encoding")).contains("snappy");
    return ReadResponse.parseFrom(Snappy.uncompress(r.body()));
  }

  /** Decodes a streamed response: frames of uvarint length, big-endian CRC32C, message. */
  static List<ChunkedReadResponse> readStreamed(String tenant, ReadRequest req) throws Exception {
    Resp r = post("/api/v1/read", tenant, Snappy.compress(req.toByteArray()), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Read-Version", "0.1.0");
    assertThat(r.status()).as(r.text()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .contains("application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse");
    List<ChunkedReadResponse> frames = new ArrayList<>();
    CodedInputStream in = CodedInputStream.newInstance(r.body());
    while (!in.isAtEnd()) {
      int len = in.readRawVarint32();
      byte[] crcBytes = in.readRawBytes(4);
      byte[] msg = in.readRawBytes(len);
      CRC32C crc = new CRC32C();
      crc.update(msg);
      assertThat(new DataInputStream(new ByteArrayInputStream(crcBytes)).readInt()).as("frame CRC32C")
          .isEqualTo((int) crc.getValue());
      frames.add(ChunkedReadResponse.parseFrom(msg));
    }
    return frames;
  }

  /** The samples of streamed chunks for query {@code index}, cut to {@code [mint, maxt]} as a client does. */
  static Map<String, List<long[]>> decodeChunks(List<ChunkedReadResponse> frames, int index, long mint, long maxt) {
    Map<String, List<long[]>> out = new TreeMap<>();
    for (ChunkedReadResponse f : frames) {
      if (f.getQueryIndex() != index) {
        continue;
      }
      for (ChunkedSeries cs : f.getChunkedSeriesList()) {
        List<long[]> list = out.computeIfAbsent(key(cs.getLabelsList()), k -> new ArrayList<>());
        for (Chunk c : cs.getChunksList()) {
          assertThat(c.getType()).isEqualTo(Chunk.Encoding.XOR);
          XorIterator it = new XorIterator(c.getData().toByteArray());
          long first = Long.MAX_VALUE;
          long last = Long.MIN_VALUE;
          while (it.next()) {
            first = Math.min(first, it.timestamp());
            last = Math.max(last, it.timestamp());
            if (it.timestamp() >= mint && it.timestamp() <= maxt) {
              list.add(new long[] {it.timestamp(), Double.doubleToRawLongBits(it.value())});
            }
          }
          assertThat(c.getMinTimeMs()).as("chunk min time").isEqualTo(first);
          assertThat(c.getMaxTimeMs()).as("chunk max time").isEqualTo(last);
        }
      }
    }
    out.values().removeIf(List::isEmpty);
    return out;
  }

  static LabelMatcher matcher(LabelMatcher.Type type, String name, String value) {
    return LabelMatcher.newBuilder().setType(type).setName(name).setValue(value).build();
  }

  @Test
  void capturedPrometheusBodiesAreStoredAndTheCapturedReadIsAnswered() throws Exception {
    String headers = new String(resource("remote-write.headers"), StandardCharsets.UTF_8);
    assertThat(headers).containsIgnoringCase("snappy");
    List<TimeSeries> sent = new ArrayList<>();
    for (int i = 0; i <= 5; i++) {
      byte[] body = resource("remote-write-" + i + ".bin");
      sent.addAll(WriteRequest.parseFrom(Snappy.uncompress(body)).getTimeseriesList());
      Resp r = post("/api/v1/push", "fixtures", body, "Content-Encoding", "snappy",
          "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Write-Version", "0.1.0");
      assertThat(r.status()).as("remote-write-%d: %s", i, r.text()).isEqualTo(200);
    }
    Map<String, List<long[]>> expected = samplesByKey(sent, Long.MIN_VALUE, Long.MAX_VALUE);
    Map<String, ExportClient.Series> exported = new ExportClient(weir.httpUrl()).export("fixtures", "{__name__=~\".+\"}");
    assertThat(exported.keySet()).isEqualTo(expected.keySet());
    for (Map.Entry<String, List<long[]>> e : expected.entrySet()) {
      ExportClient.Series s = exported.get(e.getKey());
      assertThat(s.timestamps()).as(e.getKey()).isEqualTo(e.getValue().stream().map(a -> a[0]).toList());
      assertThat(s.values()).as(e.getKey())
          .isEqualTo(e.getValue().stream().map(a -> Double.longBitsToDouble(a[1])).toList());
    }

    // The read request Prometheus sent (up, 5 minutes, SAMPLES) gets every `up` sample in its range.
    ReadRequest captured = ReadRequest.parseFrom(Snappy.uncompress(resource("remote-read-0.bin")));
    Query q = captured.getQueries(0);
    Resp raw = post("/api/v1/read", "fixtures", resource("remote-read-0.bin"), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf");
    assertThat(raw.status()).as(raw.text()).isEqualTo(200);
    ReadResponse resp = ReadResponse.parseFrom(Snappy.uncompress(raw.body()));
    assertThat(resp.getResultsCount()).isEqualTo(1);
    List<TimeSeries> up = sent.stream().filter(ts -> ts.getLabels(0).getValue().equals("up")).toList();
    Map<String, List<long[]>> want = samplesByKey(up, q.getStartTimestampMs(), q.getEndTimestampMs());
    assertThat(want).isNotEmpty();
    assertThat(printable(samplesByKey(resp.getResults(0).getTimeseriesList(), Long.MIN_VALUE, Long.MAX_VALUE)))
        .isEqualTo(printable(want));
  }

  @Test
  void bodiesOfChangingSizesAreEachReadWholeAndOnlyThemselves() throws Exception {
    // Handler threads decompress into buffers they keep for their next request: a small body after
    // a larger one must not read the larger one's tail (its series, or its metadata parsed past the
    // end), and a body over the kept size (1 MiB decompressed) still arrives whole.
    long t0 = System.currentTimeMillis() - 600_000;
    java.util.Random rnd = new java.util.Random(3);
    List<TimeSeries> sent = new ArrayList<>();
    int id = 0;
    int overKept = 0;
    for (int round = 0; round < 48; round++) {
      boolean large = round % 8 == 7;
      int n = large ? MAX_SERIES_PER_REQUEST : 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 300);
      WriteRequest.Builder req = WriteRequest.newBuilder();
      for (int i = 0; i < n; i++) {
        TimeSeries ts = series("reused_buffers", id++, t0 + round * 1_000L, large ? 60 : 1 + rnd.nextInt(3), 1);
        req.addTimeseries(ts);
        sent.add(ts);
      }
      if (!large && rnd.nextBoolean()) {
        req.addMetadata(MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.GAUGE)
            .setMetricFamilyName("reused_buffers").setHelp("round " + round));
      }
      byte[] raw = req.build().toByteArray();
      if (raw.length > 1 << 20) {
        overKept++;
      }
      Resp r = write("reuse", req.build());
      assertThat(r.status()).as("round %d (%d series, %d bytes): %s", round, n, raw.length, r.text()).isEqualTo(200);
    }
    assertThat(overKept).as("bodies past the kept buffer size").isEqualTo(6);
    Map<String, List<long[]>> expected = samplesByKey(sent, Long.MIN_VALUE, Long.MAX_VALUE);
    Map<String, ExportClient.Series> exported = new ExportClient(weir.httpUrl()).export("reuse",
        "{__name__=\"reused_buffers\"}");
    assertThat(exported.keySet()).isEqualTo(expected.keySet());
    for (Map.Entry<String, List<long[]>> e : expected.entrySet()) {
      ExportClient.Series s = exported.get(e.getKey());
      assertThat(s.timestamps()).as(e.getKey()).isEqualTo(e.getValue().stream().map(a -> a[0]).toList());
      assertThat(s.values()).as(e.getKey())
          .isEqualTo(e.getValue().stream().map(a -> Double.longBitsToDouble(a[1])).toList());
    }
  }

  @Test
  void remoteReadAnswersSamplesAndStreamedChunksAlike() throws Exception {
    long t0 = System.currentTimeMillis() - 3_600_000;
    List<TimeSeries> written = new ArrayList<>();
    for (int id = 0; id < 30; id++) {
      written.add(series("read_test", id, t0, 500, 1_000));
    }
    // Special values survive bit for bit (a staleness marker is a particular NaN).
    written.add(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("read_test"))
        .addLabels(Label.newBuilder().setName("id").setValue("special"))
        .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(Double.POSITIVE_INFINITY))
        .addSamples(Sample.newBuilder().setTimestamp(t0 + 1_000).setValue(Double.longBitsToDouble(0x7ff0000000000002L)))
        .addSamples(Sample.newBuilder().setTimestamp(t0 + 2_000).setValue(-0.0)).build());
    assertThat(write("reader", WriteRequest.newBuilder().addAllTimeseries(written).build()).status()).isEqualTo(200);

    long from = t0 + 100_000;
    long to = t0 + 300_000;
    ReadRequest.Builder req = ReadRequest.newBuilder()
        .addQueries(Query.newBuilder().setStartTimestampMs(t0).setEndTimestampMs(t0 + 1_000_000)
            .addMatchers(matcher(LabelMatcher.Type.EQ, "__name__", "read_test")))
        .addQueries(Query.newBuilder().setStartTimestampMs(from).setEndTimestampMs(to)
            .addMatchers(matcher(LabelMatcher.Type.EQ, "__name__", "read_test"))
            .addMatchers(matcher(LabelMatcher.Type.RE, "id", "0001.|special"))
            .addMatchers(matcher(LabelMatcher.Type.NEQ, "id", "00013"))
            .addMatchers(matcher(LabelMatcher.Type.NRE, "id", "0001[89]")));
    Map<String, List<long[]>> all = samplesByKey(written, t0, t0 + 1_000_000);
    Map<String, List<long[]>> subset = new TreeMap<>(samplesByKey(written, from, to));
    subset.keySet().removeIf(k -> !k.matches(".*id=\"(0001[0-7&&[^3]]|special)\".*"));
    assertThat(subset).hasSize(7);

    ReadResponse samples = readSamples("reader", req.build());
    assertThat(samples.getResultsCount()).isEqualTo(2);
    assertThat(printable(samplesByKey(samples.getResults(0).getTimeseriesList(), Long.MIN_VALUE, Long.MAX_VALUE)))
        .isEqualTo(printable(all));
    assertThat(printable(samplesByKey(samples.getResults(1).getTimeseriesList(), Long.MIN_VALUE, Long.MAX_VALUE)))
        .isEqualTo(printable(subset));

    req.addAcceptedResponseTypes(ReadRequest.ResponseType.STREAMED_XOR_CHUNKS);
    List<ChunkedReadResponse> frames = readStreamed("reader", req.build());
    assertThat(printable(decodeChunks(frames, 0, t0, t0 + 1_000_000))).isEqualTo(printable(all));
    assertThat(printable(decodeChunks(frames, 1, from, to))).isEqualTo(printable(subset));
    // 500 samples at 1s make several chunks per series (Prometheus cuts at 120).
    assertThat(frames.stream().filter(f -> f.getQueryIndex() == 0).mapToInt(f -> f.getChunkedSeries(0).getChunksCount())
        .max().orElse(0)).isGreaterThan(1);
    // Another tenant sees nothing of it.
    assertThat(readSamples("someone-else", req.clearAcceptedResponseTypes().build()).getResults(0).getTimeseriesCount())
        .isZero();
  }

  @Test
  void readLimitsAnswer422WithTheLimitNamed() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    for (int from = 0; from <= MAX_FETCHED_SERIES; from += MAX_SERIES_PER_REQUEST) {
      WriteRequest.Builder b = WriteRequest.newBuilder();
      for (int id = from; id < Math.min(from + MAX_SERIES_PER_REQUEST, MAX_FETCHED_SERIES + 1); id++) {
        b.addTimeseries(series("many", id, t0, 1, 1));
      }
      assertThat(write("many", b.build()).status()).isEqualTo(200);
    }
    ReadRequest req = ReadRequest.newBuilder().addQueries(Query.newBuilder().setStartTimestampMs(t0)
        .setEndTimestampMs(t0 + 1).addMatchers(matcher(LabelMatcher.Type.EQ, "__name__", "many"))).build();
    for (ReadRequest r : List.of(req, req.toBuilder().addAcceptedResponseTypes(
        ReadRequest.ResponseType.STREAMED_XOR_CHUNKS).build())) {
      Resp resp = post("/api/v1/read", "many", Snappy.compress(r.toByteArray()), "Content-Encoding", "snappy");
      assertThat(resp.status()).isEqualTo(422);
      assertThat(resp.text()).contains("5001 series", "--querier.max-fetched-series-per-query");
    }
    ReadRequest fewer = ReadRequest.newBuilder().addQueries(req.getQueries(0).toBuilder()
        .addMatchers(matcher(LabelMatcher.Type.RE, "id", "0000.*"))).build();
    assertThat(readSamples("many", fewer).getResults(0).getTimeseriesCount()).isEqualTo(10);
  }

  @Test
  void remoteReadSnappyBombGets413BeforeAnythingIsAllocatedAndWeirKeepsServing() throws Exception {
    // Six bytes whose snappy header declares 2,000,000,000 bytes: decompressing would allocate
    // them (the test process has a 512 MiB heap).
    byte[] bomb = {(byte) 0x80, (byte) 0xa8, (byte) 0xd6, (byte) 0xb9, 0x07, 0x00};
    Resp r = post("/api/v1/read", "bomb", bomb, "Content-Encoding", "snappy", "Content-Type", "application/x-protobuf",
        "X-Prometheus-Remote-Read-Version", "0.1.0");
    assertThat(r.status()).as(r.text()).isEqualTo(413);
    assertThat(r.text()).contains("decompresses to 2000000000 bytes", "remote read");
    assertThat(weir.metric("weir_request_duration_seconds_count{method=\"POST\",route=\"api_v1_read\","
        + "status_code=\"413\"}")).isEqualTo(1);

    long t0 = System.currentTimeMillis() - 60_000;
    assertThat(write("bomb", WriteRequest.newBuilder().addTimeseries(series("after_bomb", 1, t0, 3, 1_000)).build())
        .status()).isEqualTo(200);
    ReadResponse read = readSamples("bomb", ReadRequest.newBuilder().addQueries(Query.newBuilder()
        .setStartTimestampMs(t0 - 1).setEndTimestampMs(t0 + 10_000)
        .addMatchers(matcher(LabelMatcher.Type.EQ, "__name__", "after_bomb"))).build());
    assertThat(read.getResults(0).getTimeseriesList()).hasSize(1);
  }

  /** Tenant IDs that would escape or break a per-tenant directory if they were used as one. */
  static final List<String> HOSTILE_TENANTS = List.of("..", "a/b", "/abs/path", "nul\0byte", "x".repeat(201));

  @Test
  void hostileTenantIdsGet400WithTheReasonOnRemoteWriteAndImportAndCreateNoDirectory() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    byte[] write = Snappy.compress(WriteRequest.newBuilder().addTimeseries(series("hostile", 1, t0, 3, 1_000)).build()
        .toByteArray());
    byte[] json = ("{\"metric\":{\"__name__\":\"hostile\"},\"values\":[1],\"timestamps\":[" + t0 + "]}\n")
        .getBytes(StandardCharsets.UTF_8);
    java.util.Set<Path> dirsBefore = directories(dir);
    double writes400 = countOrZero("api_v1_push", "400");
    double imports400 = countOrZero("api_v1_import", "400");
    double malformed400 = countOrZero("malformed_request", "400");
    for (String tenant : HOSTILE_TENANTS) {
      // Raw HTTP/1.1: java.net.http refuses a NUL in a header before sending it.
      Resp w = rawPost("/api/v1/push", tenant, write, "Content-Encoding: snappy");
      // Netty refuses a NUL in a header value while decoding: that request is never routed.
      String reason = tenant.contains("\0") ? "malformed HTTP request" : "invalid tenant ID";
      assertThat(w.status()).as("remote write as %s: %s", tenant, w.text()).isEqualTo(400);
      assertThat(w.text()).as(tenant).contains(reason);
      Resp i = rawPost("/api/v1/import", tenant, json);
      assertThat(i.status()).as("import as %s: %s", tenant, i.text()).isEqualTo(400);
      assertThat(i.text()).as(tenant).contains(reason);
    }
    assertThat(directories(dir)).isEqualTo(dirsBefore);
    assertThat(Path.of("/abs/path")).doesNotExist();
    assertThat(countOrZero("api_v1_push", "400") - writes400).isEqualTo(HOSTILE_TENANTS.size() - 1);
    assertThat(countOrZero("api_v1_import", "400") - imports400).isEqualTo(HOSTILE_TENANTS.size() - 1);
    assertThat(countOrZero("malformed_request", "400") - malformed400).isEqualTo(2);
  }

  static double countOrZero(String route, String status) throws Exception {
    double v = weir.metric("weir_request_duration_seconds_count{method=\"POST\",route=\"" + route + "\",status_code=\""
        + status + "\"}");
    return Double.isNaN(v) ? 0 : v;
  }

  /** Every directory under {@code root}, relative to it. */
  static java.util.Set<Path> directories(Path root) throws Exception {
    try (java.util.stream.Stream<Path> s = Files.walk(root)) {
      return s.filter(Files::isDirectory).map(root::relativize).collect(java.util.stream.Collectors.toSet());
    }
  }

  /** A POST written byte by byte on a socket, so any header value can be sent; one request per connection. */
  static Resp rawPost(String path, String tenant, byte[] body, String... extraHeaders) throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", weir.httpPort())) {
      socket.setSoTimeout(30_000);
      StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
          + "X-Scope-OrgID: " + tenant + "\r\nContent-Length: " + body.length + "\r\n");
      for (String h : extraHeaders) {
        head.append(h).append("\r\n");
      }
      head.append("\r\n");
      java.io.OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      String resp = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int status = Integer.parseInt(resp.substring(9, 12));
      int bodyStart = resp.indexOf("\r\n\r\n");
      return new Resp(status, resp.substring(bodyStart + 4).getBytes(StandardCharsets.UTF_8), null);
    }
  }

  @Test
  void metadataIsKeptPerTenantAndServed() throws Exception {
    WriteRequest req = WriteRequest.newBuilder()
        .addMetadata(MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.COUNTER)
            .setMetricFamilyName("http_requests_total").setHelp("Requests \"served\".").setUnit(""))
        .addMetadata(MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.HISTOGRAM)
            .setMetricFamilyName("http_request_duration_seconds").setHelp("Latency.").setUnit("seconds"))
        .build();
    assertThat(write("meta", req).status()).isEqualTo(200);
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    var all = json.readTree(get("/api/v1/metadata", "meta"));
    assertThat(all.get("status").asText()).isEqualTo("success");
    assertThat(all.get("data").get("http_requests_total").get(0).get("type").asText()).isEqualTo("counter");
    assertThat(all.get("data").get("http_requests_total").get(0).get("help").asText()).isEqualTo("Requests \"served\".");
    assertThat(all.get("data").get("http_request_duration_seconds").get(0).get("unit").asText()).isEqualTo("seconds");
    assertThat(all.get("data").get("http_request_duration_seconds").get(0).get("type").asText()).isEqualTo("histogram");
    assertThat(json.readTree(get("/api/v1/metadata?limit=1", "meta")).get("data").size()).isEqualTo(1);
    var one = json.readTree(get("/api/v1/metadata?metric=http_request_duration_seconds", "meta")).get("data");
    assertThat(one.size()).isEqualTo(1);
    assertThat(one.has("http_request_duration_seconds")).isTrue();
    assertThat(json.readTree(get("/api/v1/metadata", "other-tenant")).get("data").size()).isZero();
  }

  static String get(String path, String tenant) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(weir.httpUrl() + path))
        .header("X-Scope-OrgID", tenant).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  @Test
  void malformedAndAbusiveBodiesGetTheir4xxAndChangeNothing() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    WriteRequest good = WriteRequest.newBuilder().addTimeseries(series("victim", 1, t0, 10, 1_000)).build();
    assertThat(write("victim", good).status()).isEqualTo(200);
    ExportClient export = new ExportClient(weir.httpUrl());
    Map<String, ExportClient.Series> before = export.export("victim", "{__name__=~\".+\"}");
    assertThat(before).hasSize(1);

    byte[] valid = Snappy.compress(WriteRequest.newBuilder()
        .addTimeseries(series("victim", 2, t0, 500, 100)).build().toByteArray());
    byte[] bigHeader = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 0, 0, 0, 0};
    record Case(String what, byte[] body, String tenant, String encoding, int status, String reason) {}
    List<Case> cases = List.of(
        new Case("uncompressed protobuf", good.toByteArray(), "victim", "snappy", 400, "snappy"),
        new Case("snappy but not protobuf", Snappy.compress(new byte[] {0x0f, 1, 2, 3}), "victim", "snappy", 400,
            "not a remote write request"),
        new Case("truncated", Arrays.copyOf(valid, valid.length / 2), "victim", "snappy", 400, "snappy"),
        new Case("100 MB of zeros", Snappy.compress(new byte[100 << 20]), "victim", "snappy", 413,
            "decompresses to 104857600 bytes"),
        new Case("declared 4 GiB", bigHeader, "victim", "snappy", 413, "--distributor.max-recv-msg-size"),
        new Case("missing tenant", valid, null, "snappy", 401, "no org id"),
        new Case("gzip", valid, "victim", "gzip", 415, "Content-Encoding"));
    for (Case c : cases) {
      Resp r = post("/api/v1/push", c.tenant(), c.body(), "Content-Encoding", c.encoding());
      assertThat(r.status()).as("%s: %s", c.what(), r.text()).isEqualTo(c.status());
      assertThat(r.text()).as(c.what()).containsIgnoringCase(c.reason());
    }
    // A body over the HTTP limit is refused by its Content-Length, before a byte of it is read. (A
    // client still sending the body may see the connection closed first: headers alone here.)
    String overLimit = headersOnlyPost("/api/v1/push", "victim", MAX_BODY + 1);
    assertThat(overLimit).startsWith("HTTP/1.1 413").contains("--server.http-max-request-body-bytes");
    WriteRequest.Builder tooMany = WriteRequest.newBuilder();
    for (int id = 0; id <= MAX_SERIES_PER_REQUEST; id++) {
      tooMany.addTimeseries(series("victim", 100 + id, t0, 1, 1));
    }
    Resp r = write("victim", tooMany.build());
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.text()).contains("2001 series", "--distributor.max-series-per-request");

    // Nothing stored changed, Weir keeps serving, and the refusals are counted.
    assertThat(export.export("victim", "{__name__=~\".+\"}")).isEqualTo(before);
    assertThat(post("/api/v1/push", "victim", valid, "Content-Encoding", "snappy").status()).isEqualTo(200);
    assertThat(export.export("victim", "{__name__=~\".+\"}")).hasSize(2);
    assertThat(weir.metric("weir_request_duration_seconds_count{method=\"POST\",route=\"api_v1_push\","
        + "status_code=\"400\"}")).isGreaterThanOrEqualTo(3);
    assertThat(weir.metric("weir_request_duration_seconds_count{method=\"POST\",route=\"oversized_body\","
        + "status_code=\"413\"}")).isEqualTo(1);
  }

  @Test
  void invalidSeriesGet400WithTheReasonAndTheValidOnesAreStored() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    WriteRequest req = WriteRequest.newBuilder()
        .addTimeseries(series("partial", 1, t0, 3, 1_000))
        .addTimeseries(TimeSeries.newBuilder()
            .addLabels(Label.newBuilder().setName("__name__").setValue("partial"))
            .addLabels(Label.newBuilder().setName("bad-name").setValue("x"))
            .addSamples(Sample.newBuilder().setTimestamp(t0).setValue(1)))
        .addTimeseries(series("partial", 2, t0, 3, 1_000)).build();
    Resp r = write("partial", req);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.text()).contains("bad-name");
    assertThat(new ExportClient(weir.httpUrl()).export("partial", "{__name__=\"partial\"}")).hasSize(2);
    assertThat(weir.metric("weir_discarded_samples_total{reason=\"label_invalid\",user=\"partial\"}")).isEqualTo(1);
  }

  @Test
  void rateLimitAnswers429AndTheOverridesFileIsReloadedWhileRunning() throws Exception {
    long t0 = System.currentTimeMillis() - 60_000;
    // The overrides give "limited" 1 sample/s with a burst of 100: 80 pass, the next 80 do not.
    assertThat(write("limited", WriteRequest.newBuilder().addTimeseries(series("lim", 1, t0, 80, 100)).build())
        .status()).isEqualTo(200);
    WriteRequest second = WriteRequest.newBuilder().addTimeseries(series("lim", 2, t0, 80, 100)).build();
    Resp refused = write("limited", second);
    assertThat(refused.status()).as(refused.text()).isEqualTo(429);
    assertThat(refused.text()).contains("ingestion rate limit");
    // Other tenants have the default (no limit).
    assertThat(write("unlimited", second).status()).isEqualTo(200);
    ExportClient export = new ExportClient(weir.httpUrl());
    assertThat(export.export("limited", "{__name__=\"lim\"}")).hasSize(1);
    assertThat(weir.metric("weir_discarded_samples_total{reason=\"rate_limited\",user=\"limited\"}")).isEqualTo(80);

    Files.writeString(runtimeConfig, overrides(1_000_000, 1_000_000));
    await().atMost(30, TimeUnit.SECONDS).pollInterval(java.time.Duration.ofMillis(200))
        .until(() -> write("limited", second).status() == 200);
    assertThat(export.export("limited", "{__name__=\"lim\"}")).hasSize(2);
    assertThat(weir.metric("weir_runtime_config_last_reload_successful")).isEqualTo(1);

    // A broken file keeps the last good limits and says so in a metric.
    Files.writeString(runtimeConfig, "overrides:\n  limited:\n    ingestion_rate: lots\n");
    await().atMost(30, TimeUnit.SECONDS).until(() -> weir.metric("weir_runtime_config_last_reload_successful") == 0);
    assertThat(write("limited", WriteRequest.newBuilder().addTimeseries(series("lim", 3, t0, 200, 100)).build())
        .status()).isEqualTo(200);
    assertThat(weir.log()).contains("invalid runtime config; keeping the previous limits");
  }
}
