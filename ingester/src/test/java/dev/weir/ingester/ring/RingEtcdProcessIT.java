package dev.weir.ingester.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The binary registers in a real etcd, shows the ring pages, and leaves the ring on SIGTERM. */
class RingEtcdProcessIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(WeirProcess w, String path, String accept) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(w.httpUrl() + path));
    if (accept != null) {
      b.header("Accept", accept);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void registersInEtcdShowsTheRingAndLeavesOnShutdown() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String prefix = "weir-" + UUID.randomUUID() + "/";
    try (WeirProcess w = WeirProcess.start(dir, "--ingester.id=ingester-zone-a-3", "--ingester.ring.store=etcd",
        "--ingester.ring.etcd.endpoints=" + etcd.endpoint(), "--ingester.ring.prefix=" + prefix,
        "--ingester.ring.heartbeat-period=1s", "--ingester.ring.instance-addr=127.0.0.1",
        "--ingester.ring.instance-availability-zone=zone-a")) {
      assertThat(etcd.etcdctl("get", "--prefix", "--keys-only", prefix)).contains(prefix + "ingester");
      await().untilAsserted(() -> {
        JsonNode ring = new ObjectMapper().readTree(get(w, "/ingester/ring", "application/json").body());
        assertThat(ring.get("kv_connected").asBoolean()).isTrue();
        assertThat(ring.get("instances")).hasSize(1);
        JsonNode me = ring.get("instances").get(0);
        assertThat(me.get("id").asText()).isEqualTo("ingester-zone-a-3");
        assertThat(me.get("state").asText()).isEqualTo("ACTIVE");
        assertThat(me.get("address").asText()).isEqualTo("127.0.0.1:" + w.grpcPort());
        assertThat(me.get("zone").asText()).isEqualTo("zone-a");
        assertThat(me.get("healthy").asBoolean()).isTrue();
        assertThat(me.get("tokens").asInt()).isEqualTo(128);
        assertThat(me.get("ownership").asDouble()).isEqualTo(1.0);
      });
      String html = get(w, "/ingester/ring", null).body();
      assertThat(html).contains("<table>").contains("ingester-zone-a-3").contains("ACTIVE").contains("100.00%");
      HttpResponse<String> partitions = get(w, "/ingester/partition-ring", "application/json");
      assertThat(partitions.statusCode()).isEqualTo(200);
      assertThat(partitions.body()).contains("\"partitions\":[]");

      assertThat(w.terminate(Duration.ofSeconds(30))).isIn(0, 143);
      String after = etcd.etcdctl("get", "--prefix", "--print-value-only", prefix + "ingester");
      assertThat(after).as("unregistered on shutdown").doesNotContain("ingester-zone-a-3");
    }
  }
}
