package dev.weir.ring.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.kv.KvConfig;
import dev.weir.ring.kv.KvMetrics;
import dev.weir.ring.kv.KvStore;
import dev.weir.ring.testing.EtcdServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd down for 15 seconds (seven 2 s dial timeouts), then back: the ring clients keep serving their last view meanwhile
 * (and say they are disconnected), heartbeats resume afterwards, and no instance is lost.
 */
class EtcdOutageIT {
  @TempDir Path dir;

  @Test
  void ringSurvivesAFifteenSecondEtcdOutage() throws Exception {
    try (EtcdServer etcd = EtcdServer.start(dir)) {
      KvConfig cfg = KvConfig.etcd("outage/", List.of(etcd.endpoint())).withDialTimeout(Duration.ofSeconds(2));
      List<KvStore> stores = new ArrayList<>();
      List<InstanceLifecycler> ls = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        KvStore kv = cfg.open(KvMetrics.noop());
        stores.add(kv);
        InstanceLifecycler l = new InstanceLifecycler(new InstanceLifecycler.Config("ingester", "ingester-" + i,
            "127.0.0.1:" + (9000 + i), "", 64, Duration.ofMillis(500), true), kv, RingMetrics.noop(),
            System::currentTimeMillis);
        l.start();
        l.changeState(InstanceState.ACTIVE);
        ls.add(l);
      }
      RingWatcher<RingDesc> watcher = new RingWatcher<>("ingester", stores.get(0), "ingester", RingDesc.parser(),
          RingDesc.getDefaultInstance(), RingMetrics.noop(), System::currentTimeMillis);
      try {
        await().until(() -> watcher.connected() && watcher.current().getInstancesCount() == 3
            && watcher.current().getInstancesMap().values().stream().allMatch(d -> d.getState() == InstanceState.ACTIVE));

        etcd.stop();
        long down = System.currentTimeMillis();
        await().atMost(30, TimeUnit.SECONDS).until(() -> !watcher.connected());
        // Throughout the outage the client keeps its last view.
        while (System.currentTimeMillis() - down < 15_000) {
          assertThat(watcher.current().getInstancesMap()).containsOnlyKeys("ingester-0", "ingester-1", "ingester-2");
          Thread.sleep(1_000);
        }
        etcd.restart();
        long up = System.currentTimeMillis();

        await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> {
          assertThat(watcher.connected()).isTrue();
          RingDesc d = watcher.current();
          assertThat(d.getInstancesMap()).containsOnlyKeys("ingester-0", "ingester-1", "ingester-2");
          assertThat(d.getInstancesMap().values()).allSatisfy(inst -> {
            assertThat(inst.getState()).isEqualTo(InstanceState.ACTIVE);
            assertThat(inst.getHeartbeatTimestamp()).as("heartbeats resumed").isGreaterThan(up);
          });
        });
        assertThat(ls).allSatisfy(l -> assertThat(l.lastHeartbeatMillis()).isGreaterThan(up));
      } finally {
        watcher.close();
        ls.forEach(InstanceLifecycler::close);
        stores.forEach(KvStore::close);
      }
    }
  }
}
