package dev.weir.ingester.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.FlagSet;
import org.junit.jupiter.api.Test;

class RingConfigTest {
  private static RingConfig build(String... args) throws ConfigException {
    FlagSet fs = new FlagSet();
    RingConfig.Flags flags = new RingConfig.Flags(fs);
    fs.parseArgs(args);
    return flags.build();
  }

  @Test
  void etcdEndpointsAcceptMimirsHostPortForm() throws Exception {
    RingConfig c = build("--ingester.ring.store=etcd", "--ingester.ring.etcd.endpoints=etcd:2379,http://etcd-1:2379");
    assertThat(c.kv().etcdEndpoints()).containsExactly("etcd:2379", "http://etcd-1:2379");
  }

  @Test
  void malformedEtcdEndpointFailsAtStartNamingTheKey() {
    assertThatThrownBy(() -> build("--ingester.ring.store=etcd", "--ingester.ring.etcd.endpoints=etcd"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("ingester.ring.etcd.endpoints")
        .hasMessageContaining("\"etcd\"");
  }
}
