package dev.weir.ingester;

import dev.weir.ingester.testing.Tmpfs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A really full disk: the data dir is a 16 MiB tmpfs, filled up while Weir runs. Pushes fail with
 * UNAVAILABLE and store nothing; once space returns they succeed again without a restart; after a
 * restart exactly the acknowledged samples are there. Needs permission to mount tmpfs (root in
 * the test container); elsewhere it is skipped with that reason.
 */
class DiskFullIT {
  @TempDir Path dir;
  private Tmpfs mount;

  @AfterEach
  void unmount() throws Exception {
    if (mount != null) {
      mount.close();
    }
  }

  private static WriteRequest request(long t, int k) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < 100; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("disk_test"))
          .addLabels(Label.newBuilder().setName("series").setValue("s-" + s + "-" + "x".repeat(40)))
          .addSamples(Sample.newBuilder().setTimestamp(t).setValue(k)));
    }
    return b.build();
  }

  @Test
  void fullDiskIsUnavailableThenRecoversAndKeepsExactlyTheAcknowledgedData() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    mount = Tmpfs.mount(data, "16m");
    long t0 = System.currentTimeMillis() - 600_000;
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.wal-segment-size-bytes=1048576")) {
      ManagedChannel ch = NettyChannelBuilder.forTarget(weir.grpcTarget()).usePlaintext().build();
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), "disk");
      IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
          .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      int k = 0;
      for (; k < 20; k++) {
        stub.push(request(t0 + k * 1000L, k));
      }
      Path filler = data.resolve("filler");
      try (OutputStream out = Files.newOutputStream(filler)) {
        byte[] mb = new byte[1 << 20];
        while (true) {
          out.write(mb);
        }
      } catch (IOException full) {
        // the disk is full now
      }
      int failedK = k;
      assertThatThrownBy(() -> {
        for (int i = 0; i < 50; i++) { // the first pushes may still fit in the last free blocks
          stub.push(request(t0 + (failedK + i) * 1000L, failedK + i));
        }
      }).isInstanceOfSatisfying(StatusRuntimeException.class,
          e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
      // Find the first push that failed: every push before it was acknowledged.
      Map<String, ExportClient.Series> mid = new ExportClient(weir.httpUrl()).export("disk", "disk_test");
      int acknowledged = mid.values().iterator().next().timestamps().size();
      assertThat(mid.values()).allSatisfy(s -> assertThat(s.timestamps()).hasSize(acknowledged));

      String metrics = new String(java.net.URI.create(weir.httpUrl() + "/metrics").toURL().openStream().readAllBytes());
      java.util.regex.Matcher failed = java.util.regex.Pattern
          .compile("weir_tsdb_wal_writes_failed_total ([0-9.]+)").matcher(metrics);
      assertThat(failed.find()).isTrue();
      assertThat(Double.parseDouble(failed.group(1))).isGreaterThanOrEqualTo(1);

      Files.delete(filler);
      for (k = acknowledged; k < acknowledged + 10; k++) {
        stub.push(request(t0 + k * 1000L, k));
      }
      ch.shutdownNow();
      weir.kill();
      weir.restart();
      Map<String, ExportClient.Series> after = new ExportClient(weir.httpUrl()).export("disk", "disk_test");
      assertThat(after).hasSize(100);
      for (ExportClient.Series s : after.values()) {
        assertThat(s.timestamps()).hasSize(acknowledged + 10);
        for (int i = 0; i < s.timestamps().size(); i++) {
          assertThat(s.timestamps().get(i)).isEqualTo(t0 + i * 1000L);
          assertThat(s.values().get(i)).isEqualTo(i);
        }
      }
    }
  }
}
