package dev.weir.ring.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdEndpointsTest {
  @Test
  void acceptsHostPortAsMimirDoesAndKeepsExplicitSchemes() {
    assertThat(EtcdEndpoints.normalize(
        List.of("etcd:2379", "10.0.0.1:2379", "http://etcd-0.etcd:2379", "https://etcd-1:2379/", "[::1]:2379"), false))
        .containsExactly("http://etcd:2379", "http://10.0.0.1:2379", "http://etcd-0.etcd:2379",
            "https://etcd-1:2379", "http://[::1]:2379");
  }

  @Test
  void bareHostPortUsesHttpsWhenTlsIsOn() {
    assertThat(EtcdEndpoints.normalize(List.of("etcd:2379", "http://plain:2379"), true))
        .containsExactly("https://etcd:2379", "http://plain:2379");
  }

  @Test
  void refusesEndpointsWithoutPortOrWithAnotherScheme() {
    for (String bad : List.of("etcd", "unix://etcd:2379", "http://etcd:2379/v3", "etcd :2379", "http://:2379")) {
      assertThatThrownBy(() -> EtcdEndpoints.normalize(List.of(bad), false))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("etcd endpoint \"" + bad.trim() + "\"");
    }
  }

  @Test
  void etcdStoreOpensWithHostPortEndpoints() {
    // jetcd parses endpoints as URIs when the client is built: "10.0.0.1:2379" used to fail with
    // "Illegal character in scheme name". Building the client does not connect.
    KvConfig config = KvConfig.etcd("p/", List.of("etcd:2379", "127.0.0.1:2379")).withDialTimeout(Duration.ofSeconds(1));
    try (EtcdKvStore store = new EtcdKvStore(config, new KvMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()))) {
      assertThat(store.fullKey("ring")).isEqualTo("p/ring");
    }
  }
}
