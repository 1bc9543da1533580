package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.Backlog;
import dev.weir.storage.testing.KafkaBroker;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Tenant IDs that are paths, or would become paths: {@code ..}, {@code ../wal/victim}, an absolute
 * path, a slash, a NUL byte, 200 characters. Over HTTP and gRPC they are refused with 400 /
 * INVALID_ARGUMENT and a reason; as Kafka record keys they are skipped and counted as client
 * errors without stalling the partition. In no case does a file or directory appear outside the
 * data dir, or a tenant directory with such a name inside it.
 */
class HostileInputIT {
  static final String GOOD = "good";

  @TempDir Path dir;

  /** The hostile IDs; {@code absolute} is a fresh path outside the data dir, checked afterwards. */
  static List<String> hostile(Path absolute) {
    return List.of("..", "../wal/victim", "/tmp/x", absolute.toString(), "a/b", "a\0b", "a".repeat(200));
  }

  record Raw(int status, String text) {}

  /** POST over a plain socket: java.net.http refuses to send a header with a NUL byte. */
  static Raw rawPost(int port, String path, String tenant, byte[] body, String... headers) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      ByteArrayOutputStream req = new ByteArrayOutputStream();
      StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      head.append("X-Scope-OrgID: ").append(tenant).append("\r\n");
      for (int i = 0; i < headers.length; i += 2) {
        head.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
      }
      head.append("Content-Length: ").append(body.length).append("\r\nConnection: close\r\n\r\n");
      req.write(head.toString().getBytes(StandardCharsets.UTF_8));
      req.write(body);
      OutputStream out = s.getOutputStream();
      out.write(req.toByteArray());
      out.flush();
      return readResponse(s.getInputStream());
    } catch (java.net.SocketTimeoutException e) {
      return new Raw(-1, "no complete response within 10 s");
    } catch (java.net.SocketException e) {
      return new Raw(-1, "connection closed: " + e.getMessage());
    }
  }

  /** Status line, headers, and a body of Content-Length bytes or chunks; keep-alive is not awaited. */
  static Raw readResponse(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      byte[] h = head.toByteArray();
      int n = h.length;
      if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
        break;
      }
    }
    String headers = head.toString(StandardCharsets.ISO_8859_1);
    if (!headers.startsWith("HTTP/1.")) {
      return new Raw(-1, headers);
    }
    int status = Integer.parseInt(headers.substring(9, 12));
    java.util.regex.Matcher len = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)").matcher(headers);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (len.find()) {
      body.write(in.readNBytes(Integer.parseInt(len.group(1))));
    } else if (headers.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked")) {
      while (true) {
        StringBuilder line = new StringBuilder();
        while ((b = in.read()) >= 0 && b != '\n') {
          line.append((char) b);
        }
        int size = Integer.parseInt(line.toString().trim().split(";")[0], 16);
        if (size == 0) {
          break;
        }
        body.write(in.readNBytes(size));
        in.readNBytes(2);
      }
    } else {
      body.write(in.readAllBytes());
    }
    return new Raw(status, headers + body.toString(StandardCharsets.UTF_8));
  }

  static String printable(String id) {
    String p = id.replace("\0", "\\0");
    return p.length() > 40 ? p.substring(0, 10) + "…(" + p.length() + " chars)" : p;
  }

  static void assertNothingOutsideOrNamedHostile(Path data, Path absolute, boolean tmpXExistedBefore) throws IOException {
    List<Path> outside = new ArrayList<>(List.of(absolute, data.resolveSibling("wal"),
        data.resolve("wal/victim"), data.resolve("tsdb/victim"), data.resolve("wal/a"), data.resolve("tsdb/a"),
        data.resolve("weir-wal")));
    if (!tmpXExistedBefore) {
      outside.add(Path.of("/tmp/x"));
    }
    assertThat(outside).as("paths a hostile tenant ID would create").noneMatch(Files::exists);
    for (String sub : List.of("wal", "tsdb")) {
      Path p = data.resolve(sub);
      if (Files.isDirectory(p)) {
        try (Stream<Path> s = Files.list(p)) {
          assertThat(s.map(x -> x.getFileName().toString()).toList()).as("tenant dirs under %s", p)
              .allMatch(n -> n.equals(GOOD));
        }
      }
    }
    try (Stream<Path> s = Files.list(data)) {
      assertThat(s.map(x -> x.getFileName().toString()).toList()).as("files directly in the data dir (a tenant"
          + " \"..\" would put WAL segments or blocks here)").noneMatch(n -> n.matches("\\d{8}|checkpoint.*|[0-9A-Z]{26}"));
    }
  }

  @Test
  void hostileTenantIdsAreRefusedOverHttpAndGrpcWithAReason() throws Exception {
    Path absolute = dir.resolve("outside-" + UUID.randomUUID());
    boolean tmpX = Files.exists(Path.of("/tmp/x"));
    long t0 = System.currentTimeMillis() - 600_000;
    AckLedger hostileWrites = new AckLedger("unused", "hostile_http", 3, t0, 1_000);
    byte[] remoteWrite = Snappy.compress(hostileWrites.request(0).toByteArray());
    byte[] importLine = ("{\"metric\":{\"__name__\":\"hostile_import\"},\"values\":[1],\"timestamps\":[" + t0 + "]}\n")
        .getBytes(StandardCharsets.UTF_8);
    try (WeirProcess weir = WeirProcess.start(dir)) {
      ManagedChannel ch = NettyChannelBuilder.forTarget(weir.grpcTarget()).usePlaintext().build();
      List<String> problems = new ArrayList<>();
      try {
        for (String id : hostile(absolute)) {
          Raw push = rawPost(weir.httpPort(), "/api/v1/push", id, remoteWrite, "Content-Encoding", "snappy",
              "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Write-Version", "0.1.0");
          if (!refused(id, push)) {
            problems.add("remote write " + printable(id) + ": " + push.status() + " " + tail(push.text()));
          }
          Raw imp = rawPost(weir.httpPort(), "/api/v1/import", id, importLine, "Content-Type", "application/json");
          if (!refused(id, imp)) {
            problems.add("import " + printable(id) + ": " + imp.status() + " " + tail(imp.text()));
          }
          Metadata md = new Metadata();
          try {
            md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), id);
            IngesterGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                .withDeadlineAfter(10, TimeUnit.SECONDS).push(hostileWrites.request(0));
            problems.add("gRPC " + printable(id) + ": accepted");
          } catch (StatusRuntimeException e) {
            Status st = e.getStatus();
            boolean clientRefusedToSend = st.getCode() == Status.Code.INTERNAL
                && String.valueOf(st.getDescription()).contains("header");
            boolean droppedByTransport = id.indexOf('\0') >= 0 && st.getCode() == Status.Code.UNAUTHENTICATED;
            if (!clientRefusedToSend && !droppedByTransport && (st.getCode() != Status.Code.INVALID_ARGUMENT
                || !String.valueOf(st.getDescription()).toLowerCase().contains("tenant"))) {
              problems.add("gRPC " + printable(id) + ": " + st.getCode() + " " + st.getDescription());
            }
          } catch (IllegalArgumentException clientRefusedToSend) {
            // grpc-java will not put this value in an ASCII header: it cannot reach the server
          }
        }
        assertThat(weir.isAlive()).as("weir exited:%n%s", weir.logTail(40)).isTrue();
        assertThat(problems).as("hostile tenant IDs not refused with 400 / INVALID_ARGUMENT naming the tenant;"
            + "%n--- weir log tail ---%n%s", weir.logTail(20)).isEmpty();

        // The process still serves a valid tenant, and only that tenant exists on disk.
        AckLedger good = new AckLedger(GOOD, "hostile_control", 3, t0, 1_000);
        assertThat(new LedgerWriter(good, LedgerWriter.remoteWrite(weir.httpUrl(), Duration.ofSeconds(10))).write(3))
            .as("%s", good).isEqualTo(3);
        AckLedger.Report r = good.check(new ExportClient(weir.httpUrl()));
        assertThat(r.ok()).as("%s%n%s", good, r).isTrue();
      } finally {
        ch.shutdownNow();
      }
      assertNothingOutsideOrNamedHostile(dir.resolve("data"), absolute, tmpX);
    } finally {
      if (!tmpX) {
        deleteTree(Path.of("/tmp/x"));
      }
    }
  }

  /**
   * 400 naming the tenant. A NUL byte never reaches Weir's tenant check: Netty either drops a
   * header value containing it (the request has no tenant: 401 "no org id") or fails to decode the
   * request (400 "malformed HTTP request: Validation failed for header 'X-Scope-OrgID'"); both
   * were seen in full runs. Either refuses it just as well (nothing is stored, no path is built),
   * so they are accepted for NUL only.
   */
  static boolean refused(String id, Raw r) {
    String text = r.text().toLowerCase(java.util.Locale.ROOT);
    if (id.indexOf('\0') >= 0 && (r.status() == 401 && text.contains("no org id")
        || r.status() == 400 && text.contains("header 'x-scope-orgid'"))) {
      return true;
    }
    return r.status() == 400 && text.contains("tenant");
  }

  static String tail(String s) {
    String one = s.replace("\r\n", " | ");
    return one.length() > 300 ? one.substring(one.length() - 300) : one;
  }

  @Test
  void hostileTenantKeysInKafkaRecordsAreSkippedCountedAndDoNotStallThePartition() throws Exception {
    Path absolute = dir.resolve("outside-" + UUID.randomUUID());
    boolean tmpX = Files.exists(Path.of("/tmp/x"));
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    long t0 = System.currentTimeMillis() - 600_000;
    AckLedger good = new AckLedger(GOOD, "hostile_kafka_control", 3, t0, 1_000);
    AckLedger hostileWrites = new AckLedger("unused", "hostile_kafka", 3, t0, 1_000);
    List<String> ids = hostile(absolute);
    Path data = dir.resolve("i/data");
    try (WeirProcess ing = WeirProcess.start(dir.resolve("i"), c.args("--target=ingester",
        "--ingester.id=ingester-zone-a-0"))) {
      try (KafkaProducer<byte[], byte[]> p = Backlog.producer(c.broker.bootstrap())) {
        long k = good.attempt();
        p.send(Backlog.record(c.topic, 0, t0, GOOD, good.request(k))).get(30, TimeUnit.SECONDS);
        good.ack(k);
        for (String id : ids) {
          p.send(Backlog.record(c.topic, 0, t0, id, hostileWrites.request(0))).get(30, TimeUnit.SECONDS);
        }
        for (int i = 0; i < 2; i++) {
          k = good.attempt();
          p.send(Backlog.record(c.topic, 0, t0, GOOD, good.request(k))).get(30, TimeUnit.SECONDS);
          good.ack(k);
        }
      }
      long end = 3L + ids.size();
      try {
        org.awaitility.Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500))
            .until(() -> ing.metric(BrokerFaultsIT.COMMITTED) == end);
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("the partition stalled on a hostile key: committed offset "
            + ing.metric(BrokerFaultsIT.COMMITTED) + " of " + end + "; /ready: " + ing.getResponse("/ready").body()
            + "\n" + ing.metricLines("reader_") + "\n--- weir log tail ---\n" + ing.logTail(40), e);
      }
      assertThat(ing.getResponse("/ready").statusCode()).as("/ready after the hostile records: %s",
          ing.getResponse("/ready").body()).isEqualTo(200);
      AckLedger.Report r = good.check(new ExportClient(ing.httpUrl()));
      assertThat(r.ok()).as("valid records around the hostile ones: %s%n%s", good, r).isTrue();
      double invalid = ing.metricSum(n -> n.equals("weir_ingest_storage_reader_client_errors_total"));
      String lines = ing.metricLines("client_errors");
      assertThat(lines).as("client errors counted with reason invalid_tenant").contains("reason=\"invalid_tenant\"");
      assertThat(invalid).as("every hostile key is one client error: %s", lines).isEqualTo(ids.size());
      assertNothingOutsideOrNamedHostile(data, absolute, tmpX);
    } finally {
      if (!tmpX) {
        deleteTree(Path.of("/tmp/x")); // written by this run if the check above failed
      }
    }
  }

  static void deleteTree(Path p) throws IOException {
    if (Files.exists(p)) {
      try (Stream<Path> s = Files.walk(p)) {
        for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(x);
        }
      }
    }
  }
}
