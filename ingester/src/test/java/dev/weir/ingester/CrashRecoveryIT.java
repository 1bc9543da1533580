package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kill -9 of the real process at random moments under a steady write load, 10 times: after each
 * restart every acknowledged sample is present exactly once, and the push that was in flight at
 * the kill is either entirely present or entirely absent. Block range 1m with compaction every
 * second, so kills also land during compactions and checkpoints.
 */
class CrashRecoveryIT {
  static final int SERIES = 300;
  static final long STEP_MS = 1000;
  static final String TENANT = "crash";

  @TempDir Path dir;

  private static WriteRequest request(long base, long k) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < SERIES; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("crash_test"))
          .addLabels(Label.newBuilder().setName("series").setValue(String.format("%04d", s)))
          .addSamples(Sample.newBuilder().setTimestamp(base + k * STEP_MS).setValue(k * 10_000.0 + s)));
    }
    return b.build();
  }

  @Test
  void everyAcknowledgedSampleSurvivesKillNineExactlyOnce() throws Exception {
    Random random = new Random(2026);
    long base = System.currentTimeMillis() - 7_200_000L;
    long acked = -1; // highest k acknowledged so far
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.block-ranges-period=1m",
        "--blocks-storage.tsdb.head-compaction-interval=1s", "--blocks-storage.tsdb.wal-segment-size-bytes=1048576")) {
      ExportClient export = new ExportClient(weir.httpUrl());
      for (int round = 0; round < 10; round++) {
        AtomicLong lastAck = new AtomicLong(acked);
        AtomicBoolean stop = new AtomicBoolean();
        ManagedChannel ch = NettyChannelBuilder.forTarget(weir.grpcTarget()).usePlaintext().build();
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), TENANT);
        IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        ExecutorService writer = Executors.newSingleThreadExecutor();
        long start = acked + 1;
        Future<?> load = writer.submit(() -> {
          for (long k = start; !stop.get(); k++) {
            try {
              stub.withDeadlineAfter(10, TimeUnit.SECONDS).push(request(base, k));
              lastAck.set(k);
            } catch (StatusRuntimeException e) {
              return; // the process died mid-push: this k is "in flight"
            }
          }
        });
        // Kill at a random moment, but only once this round acknowledged a few pushes: on a loaded
        // host a fixed window could end before the restarted process took any.
        await().atMost(60, TimeUnit.SECONDS).until(() -> lastAck.get() >= start + 5 || load.isDone());
        Thread.sleep(random.nextInt(2_000));
        weir.kill();
        stop.set(true);
        load.get(30, TimeUnit.SECONDS);
        writer.shutdown();
        ch.shutdownNow();
        acked = lastAck.get();

        weir.restart();
        Map<String, ExportClient.Series> got = export.export(TENANT, "crash_test");
        assertThat(got).as("round %d: all series present", round).hasSize(SERIES);
        long present = -1;
        for (ExportClient.Series s : got.values()) {
          List<Long> expected = new ArrayList<>();
          long n = s.timestamps().size();
          for (long k = 0; k < n; k++) {
            expected.add(base + k * STEP_MS);
          }
          assertThat(s.timestamps()).as("round %d %s: consecutive, each once", round, s.labels())
              .containsExactlyElementsOf(expected);
          int idx = Integer.parseInt(s.labels().replaceAll(".*series=\"(\\d+)\".*", "$1"));
          for (int k = 0; k < n; k++) {
            assertThat(s.values().get(k)).isEqualTo(k * 10_000.0 + idx);
          }
          if (present < 0) {
            present = n - 1;
          }
          assertThat(n - 1).as("round %d: the in-flight push is all or nothing", round).isEqualTo(present);
        }
        assertThat(present).as("round %d: acknowledged %d", round, acked).isBetween(acked, acked + 1);
        System.out.printf("crash round %d: acknowledged up to push %d, present %d%n", round, acked, present);
        acked = present;
      }
      String log = weir.log();
      System.out.printf("torn WAL tails repaired: %d, blocks compacted: %d%n",
          log.split("WAL tail torn", -1).length - 1, log.split("head compacted into block", -1).length - 1);
      assertThat(acked).as("the load made progress").isGreaterThan(50);
      assertThat(log).contains("msg=\"WAL replayed\"").contains("head compacted into block");
    }
  }
}
