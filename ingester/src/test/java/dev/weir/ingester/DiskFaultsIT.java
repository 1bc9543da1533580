package dev.weir.ingester;

import dev.weir.ingester.testing.Tmpfs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.testing.KafkaBroker;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk under the data dir fails: it fills up (a 16 MiB tmpfs mounted by the test; skipped
 * where mounting is not allowed), or a byte in the middle of an early WAL segment flips while the
 * process is down. Acknowledged samples must survive both: a full disk refuses writes retryably
 * and loses none it acknowledged; a corrupt WAL is repaired at start (classic mode keeps every
 * sample before the damage; Kafka mode re-consumes what the repair dropped).
 */
class DiskFaultsIT {
  /** 64 KiB, the smallest segment the flag allows: a few hundred writes make several segments. */
  static final String SMALL_SEGMENTS = "--blocks-storage.tsdb.wal-segment-size-bytes=65536";

  @TempDir Path dir;
  private Tmpfs mount;

  @AfterEach
  void unmount() throws Exception {
    if (mount != null) {
      mount.close();
    }
  }

  static IngesterGrpc.IngesterBlockingStub stub(ManagedChannel ch, String tenant) {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), tenant);
    return IngesterGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static void fill(Path file) {
    try (OutputStream out = Files.newOutputStream(file)) {
      byte[] mb = new byte[1 << 20];
      while (true) {
        out.write(mb);
      }
    } catch (IOException full) {
      // the disk is full now
    }
  }

  static void assertFound(WeirProcess weir, AckLedger ledger, String when) throws Exception {
    AckLedger.Report r = ledger.check(new ExportClient(weir.httpUrl()));
    assertThat(r.ok()).as("%s: %s%n%s%n--- weir log tail ---%n%s", when, ledger, r, weir.logTail(40)).isTrue();
  }

  @Test
  void fullDiskRefusesHttpAndGrpcPushesRetryablyAndKeepsEveryAcknowledgedSampleAcrossKillNine() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    mount = Tmpfs.mount(data, "16m");
    long t0 = System.currentTimeMillis() - 600_000;
    AckLedger overHttp = new AckLedger("disk-http", "disk_full_http", 100, t0, 1_000);
    AckLedger overGrpc = new AckLedger("disk-grpc", "disk_full_grpc", 100, t0, 1_000);
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.wal-segment-size-bytes=1048576")) {
      ManagedChannel ch = NettyChannelBuilder.forTarget(weir.grpcTarget()).usePlaintext().build();
      try {
        LedgerWriter http = new LedgerWriter(overHttp, LedgerWriter.remoteWrite(weir.httpUrl(), Duration.ofSeconds(20)));
        LedgerWriter grpc = new LedgerWriter(overGrpc, LedgerWriter.grpcPush(stub(ch, "disk-grpc"),
            Duration.ofSeconds(20)));
        assertThat(http.write(10)).as("%s", overHttp).isEqualTo(10);
        assertThat(grpc.write(10)).as("%s", overGrpc).isEqualTo(10);

        Path filler = data.resolve("filler");
        fill(filler);
        // The first writes may still fit in the last free blocks; 30 each are far more than that.
        http.write(30);
        grpc.write(30);
        assertThat(weir.isAlive()).as("weir exited on a full disk:%n%s", weir.logTail(40)).isTrue();
        assertThat(overHttp.refusals()).as("HTTP pushes on a full disk are refused: %s", overHttp).isNotEmpty();
        assertThat(overGrpc.refusals()).as("gRPC pushes on a full disk are refused: %s", overGrpc).isNotEmpty();
        assertThat(overHttp.refusals().keySet()).as("HTTP refusals are retryable 5xx, never 4xx: %s", overHttp)
            .allMatch(k -> k.startsWith("http 5"));
        assertThat(overGrpc.refusals().keySet()).as("gRPC refusals are UNAVAILABLE: %s", overGrpc)
            .containsOnly("grpc UNAVAILABLE");
        assertFound(weir, overHttp, "while full (HTTP)");
        assertFound(weir, overGrpc, "while full (gRPC)");

        Files.delete(filler);
        // Space is back: the next writes are acknowledged without a restart.
        await().atMost(30, TimeUnit.SECONDS).until(http::writeNext);
        await().atMost(30, TimeUnit.SECONDS).until(grpc::writeNext);
        assertThat(http.write(10)).as("HTTP after space returned: %s", overHttp).isEqualTo(10);
        assertThat(grpc.write(10)).as("gRPC after space returned: %s", overGrpc).isEqualTo(10);
        assertFound(weir, overHttp, "after space returned (HTTP)");
        assertFound(weir, overGrpc, "after space returned (gRPC)");
      } finally {
        ch.shutdownNow();
      }
      weir.kill();
      weir.restart();
      assertFound(weir, overHttp, "after kill -9 and restart (HTTP)");
      assertFound(weir, overGrpc, "after kill -9 and restart (gRPC)");
    }
  }

  static List<Integer> segments(Path walDir) throws IOException {
    List<Integer> out = new ArrayList<>();
    if (!Files.isDirectory(walDir)) {
      return out;
    }
    try (Stream<Path> s = Files.list(walDir)) {
      s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{8}")).forEach(n -> out.add(Integer.parseInt(n)));
    }
    out.sort(null);
    return out;
  }

  /** Flips the byte in the middle of {@code segment}; returns a description for messages. */
  static String flipMiddle(Path walDir, int segment) throws IOException {
    Path seg = walDir.resolve(String.format("%08d", segment));
    long size = Files.size(seg);
    Corrupt.flipByte(seg, size / 2);
    return seg + " byte " + size / 2 + " of " + size;
  }

  /** A start that fails names the flipped byte and the reason in the log, not just "exited with 1". */
  static void awaitReadyAfterFlip(WeirProcess weir, String flipped) throws Exception {
    try {
      weir.awaitReady(Duration.ofSeconds(120));
    } catch (IllegalStateException e) {
      String reason = weir.log().lines().filter(l -> l.contains("level=error") || l.contains("failed to start"))
          .reduce((a, b) -> b).orElse("(no error line)");
      throw new AssertionError("weir did not start after flipping " + flipped + " (expected: repair by default"
          + " and start): " + reason + "\n--- weir log tail ---\n" + weir.logTail(20), e);
    }
  }

  @Test
  void walByteFlippedInAnEarlySegmentIsRepairedAtStartAndEverySampleBeforeItIsKept() throws Exception {
    AckLedger ledger = new AckLedger("wal-classic", "wal_flip_classic", 100, System.currentTimeMillis() - 600_000,
        1_000);
    Path walDir = dir.resolve("data/tsdb/" + ledger.tenant + "/wal");
    // segment that held the newest WAL record when write k was acknowledged
    Map<Long, Integer> segmentAtAck = new TreeMap<>();
    try (WeirProcess weir = WeirProcess.start(dir, SMALL_SEGMENTS)) {
      LedgerWriter w = new LedgerWriter(ledger, LedgerWriter.remoteWrite(weir.httpUrl(), Duration.ofSeconds(20)));
      for (long k = 0; segments(walDir).size() < 5 && k < 5_000; k++) {
        assertThat(w.writeNext()).as("%s", ledger).isTrue();
        List<Integer> segs = segments(walDir);
        segmentAtAck.put(k, segs.get(segs.size() - 1));
      }
      List<Integer> segs = segments(walDir);
      assertThat(segs).as("WAL segments in %s", walDir).hasSizeGreaterThanOrEqualTo(5);
      weir.kill();
      int victim = segs.get(1);
      String flipped = flipMiddle(walDir, victim);
      // Writes acknowledged while the newest segment was before the victim lie wholly before the damage.
      AckLedger before = new AckLedger(ledger.tenant, ledger.metric, ledger.series, ledger.t0, ledger.stepMs);
      for (Map.Entry<Long, Integer> e : segmentAtAck.entrySet()) {
        long k = before.attempt();
        if (e.getValue() < victim) {
          before.ack(k);
        }
      }
      weir.relaunch();
      awaitReadyAfterFlip(weir, flipped);
      String log = weir.log();
      assertThat(log.toLowerCase(java.util.Locale.ROOT)).as("the corruption at %s is logged", flipped)
          .contains("corrupt");
      double corruptions = weir.metricSum(n -> n.contains("wal") && n.contains("corrupt"));
      assertThat(corruptions).as("a metric named *wal*corrupt* counts the repair (e.g. weir_tsdb_wal_corruptions_total);"
          + " %s", weir.metricLines("wal")).isGreaterThanOrEqualTo(1);
      AckLedger.Report r = before.check(new ExportClient(weir.httpUrl()));
      assertThat(r.ok()).as("every sample before the flipped byte (%s) is found: %d of %d writes were before it;"
          + " %s%n--- weir log tail ---%n%s", flipped, before.ackedWrites(), ledger.ackedWrites(), r,
          weir.logTail(40)).isTrue();
      assertThat(before.ackedWrites()).as("some writes were wholly before the victim segment").isPositive();
    }
  }

  @Test
  void walByteFlippedInAnEarlySegmentInKafkaModeIsRebuiltFromKafka() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, 1);
    AckLedger ledger = new AckLedger("wal-kafka", "wal_flip_kafka", 100, System.currentTimeMillis() - 600_000, 1_000);
    Path walDir = dir.resolve("data/tsdb/" + ledger.tenant + "/wal");
    try (WeirProcess ing = WeirProcess.start(dir, c.args("--target=ingester", "--ingester.id=ingester-zone-a-0",
        SMALL_SEGMENTS)); Writer w = BrokerFaultsIT.writer(c)) {
      LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.kafka(w));
      assertThat(writer.write(300)).as("%s", ledger).isEqualTo(300);
      BrokerFaultsIT.assertCommittedToTheEnd(ing, c);
      List<Integer> segs = segments(walDir);
      assertThat(segs).as("WAL segments in %s", walDir).hasSizeGreaterThanOrEqualTo(3);
      ing.kill();
      String flipped = flipMiddle(walDir, segs.get(1));
      ing.relaunch();
      awaitReadyAfterFlip(ing, flipped);
      BrokerFaultsIT.assertCommittedToTheEnd(ing, c);
      AckLedger.Report r = ledger.check(new ExportClient(ing.httpUrl()));
      assertThat(r.ok()).as("after flipping %s: %s%n%s%n--- weir log tail ---%n%s", flipped, ledger, r,
          ing.logTail(40)).isTrue();
    }
  }
}
