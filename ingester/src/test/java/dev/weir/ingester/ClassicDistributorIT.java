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
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.Rw2Requests;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Classic mode with a separate distributor: each series is forwarded over gRPC to the ingester
 * owning its token in the instance ring (etcd); client errors come back, the rest is stored.
 */
class ClassicDistributorIT {
  @TempDir Path dir;

  @Test
  void forwardsEachSeriesToTheIngesterOwningItsToken() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String prefix = "classic-" + UUID.randomUUID() + "/";
    String[] ring = {"--ingester.ring.store=etcd", "--ingester.ring.etcd.endpoints=" + etcd.endpoint(),
        "--ingester.ring.prefix=" + prefix, "--ingester.ring.heartbeat-period=1s",
        "--ingester.ring.instance-addr=127.0.0.1"};
    try (WeirProcess a = WeirProcess.start(dir.resolve("a"), concat(ring, "--target=ingester", "--ingester.id=ing-a"));
         WeirProcess b = WeirProcess.start(dir.resolve("b"), concat(ring, "--target=ingester", "--ingester.id=ing-b"));
         WeirProcess d = WeirProcess.start(dir.resolve("d"), concat(ring, "--target=distributor"))) {
      await().atMost(30, TimeUnit.SECONDS).until(() -> d.get("/ingester/ring").split("<td>ACTIVE</td>", -1).length == 3);
      long t = System.currentTimeMillis() - 60_000;
      WriteRequest.Builder req = WriteRequest.newBuilder();
      for (int s = 0; s < 2_000; s++) {
        req.addTimeseries(TimeSeries.newBuilder()
            .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
            .addLabels(Label.newBuilder().setName("__name__").setValue("classic")) // unsorted on purpose
            .addSamples(Sample.newBuilder().setTimestamp(t).setValue(s)));
      }
      req.addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("bad-name"))
          .addSamples(Sample.newBuilder().setTimestamp(t)));
      ManagedChannel ch = NettyChannelBuilder.forTarget(d.grpcTarget()).usePlaintext().build();
      try {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), "c");
        IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
        try {
          stub.push(req.build());
          throw new AssertionError("the invalid series should be reported");
        } catch (StatusRuntimeException e) {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("bad-name");
        }
      } finally {
        ch.shutdownNow();
      }
      Map<String, ExportClient.Series> onA = new ExportClient(a.httpUrl()).export("c", "classic");
      Map<String, ExportClient.Series> onB = new ExportClient(b.httpUrl()).export("c", "classic");
      assertThat(onA.size() + onB.size()).isEqualTo(2_000);
      assertThat(onA.keySet()).doesNotContainAnyElementsOf(onB.keySet());
      assertThat(onA.size()).as("both ingesters own part of the token space").isBetween(300, 1_700);
      assertThat(d.metric("weir_discarded_samples_total{reason=\"metric_name_invalid\",user=\"c\"}")).isEqualTo(1);

      // Remote write 2.0 through the distributor: an ingester's refusal (out-of-order samples)
      // comes back with its count, so the written-samples header stays exact.
      Rw2Requests v2 = new Rw2Requests();
      v2.floats(new String[] {"__name__", "classic", "series", "1"}, t - 30_000, 9, t - 20_000, 9);
      v2.floats(new String[] {"__name__", "classic", "series", "2"}, t + 1_000, 9);
      v2.floats(new String[] {"__name__", "classic", "series", "3"}, t + 1_000, 9, t + 2_000, 10);
      v2.add(v2.series("__name__", "classic", "series").addSamples(dev.weir.proto.writev2.Sample.newBuilder()
          .setTimestamp(t + 1_000).setValue(1)));
      java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(d.httpUrl() + "/api/v1/push"))
              .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(
                  org.xerial.snappy.Snappy.compress(v2.build().toByteArray())))
              .header("X-Scope-OrgID", "c").header("Content-Encoding", "snappy")
              .header("Content-Type", "application/x-protobuf;proto=io.prometheus.write.v2.Request").build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
      assertThat(r.body()).contains("odd length");
      assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("3");
      Map<String, ExportClient.Series> all = new java.util.TreeMap<>(new ExportClient(a.httpUrl()).export("c", "classic"));
      all.putAll(new ExportClient(b.httpUrl()).export("c", "classic"));
      assertThat(all.get("{__name__=\"classic\",series=\"3\"}").timestamps()).containsExactly(t, t + 1_000, t + 2_000);
      assertThat(all.get("{__name__=\"classic\",series=\"1\"}").timestamps()).containsExactly(t);
    }
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
