package dev.weir.ring.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.kv.KvConfig;
import dev.weir.ring.kv.KvMetrics;
import dev.weir.ring.kv.KvStore;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.ring.testing.EtcdServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Instance and partition rings kept in a real etcd by several lifecyclers. */
class RingEtcdIT {
  @Test
  void threeLifecyclersRegisterConcurrentlyAndAStoppedHeartbeatTurnsUnhealthy() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String prefix = "ring-" + UUID.randomUUID() + "/";
    List<KvStore> stores = new ArrayList<>();
    List<InstanceLifecycler> lifecyclers = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> starts = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      // Separate clients, as three processes would have.
      KvStore kv = KvConfig.etcd(prefix, List.of(etcd.endpoint())).open(KvMetrics.noop());
      stores.add(kv);
      InstanceLifecycler l = new InstanceLifecycler(new InstanceLifecycler.Config("ingester", "ingester-" + i,
          "127.0.0.1:" + (9000 + i), "zone-a", 128, Duration.ofMillis(200), false), kv, RingMetrics.noop(),
          System::currentTimeMillis);
      lifecyclers.add(l);
      starts.add(pool.submit(() -> {
        go.await();
        l.start();
        l.changeState(InstanceState.ACTIVE);
        return null;
      }));
    }
    go.countDown();
    for (Future<?> f : starts) {
      f.get();
    }
    pool.shutdown();
    KvStore reader = stores.get(0);
    RingWatcher<RingDesc> watcher = new RingWatcher<>("ingester", reader, "ingester", RingDesc.parser(),
        RingDesc.getDefaultInstance(), RingMetrics.noop(), System::currentTimeMillis);
    try {
      await().untilAsserted(() -> {
        RingDesc d = watcher.current();
        assertThat(d.getInstancesMap()).containsOnlyKeys("ingester-0", "ingester-1", "ingester-2");
        assertThat(d.getInstancesMap().values()).allSatisfy(i -> assertThat(i.getState()).isEqualTo(InstanceState.ACTIVE));
      });
      Set<Integer> tokens = new HashSet<>();
      watcher.current().getInstancesMap().values().forEach(i -> tokens.addAll(i.getTokensList()));
      assertThat(tokens).as("no token owned twice").hasSize(3 * 128);
      assertThat(etcd.etcdctl("get", "--prefix", "--keys-only", prefix)).contains(prefix + "ingester");

      // Stop one heartbeat (the process "hangs"): readers see it unhealthy after the timeout.
      lifecyclers.get(1).close();
      long stoppedAt = System.currentTimeMillis();
      await().untilAsserted(() -> {
        InstanceRing r = new InstanceRing(watcher.current(), System.currentTimeMillis(), 1_000);
        InstanceDesc stopped = r.get("ingester-1");
        assertThat(stopped).isNotNull();
        assertThat(r.healthy(stopped)).isFalse();
        assertThat(r.healthy(r.get("ingester-0"))).isTrue();
        assertThat(r.healthy(r.get("ingester-2"))).isTrue();
      });
      // Unhealthy because its heartbeats stopped at the close, not for another reason: the last
      // one it wrote is from before the close (what the others wrote since is newer).
      InstanceRing after = new InstanceRing(watcher.current(), System.currentTimeMillis(), 1_000);
      assertThat(after.get("ingester-1").getHeartbeatTimestamp()).isLessThanOrEqualTo(stoppedAt);
      await().untilAsserted(() -> assertThat(watcher.current().getInstancesMap().get("ingester-0")
          .getHeartbeatTimestamp()).isGreaterThan(stoppedAt));
    } finally {
      watcher.close();
      for (InstanceLifecycler l : lifecyclers) {
        l.close();
      }
      stores.forEach(KvStore::close);
    }
  }

  @Test
  void partitionOwnersFromThreeIngestersActivateTheirPartitions() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String prefix = "partitions-" + UUID.randomUUID() + "/";
    List<PartitionLifecycler> ls = new ArrayList<>();
    List<KvStore> stores = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        KvStore kv = KvConfig.etcd(prefix, List.of(etcd.endpoint())).open(KvMetrics.noop());
        stores.add(kv);
        PartitionLifecycler l = new PartitionLifecycler(new PartitionLifecycler.Config("ingester-partitions", i,
            "ingester-zone-a-" + i, 128, 1, Duration.ZERO, Duration.ofMillis(200), true, Duration.ZERO), kv, RingMetrics.noop(),
            System::currentTimeMillis);
        ls.add(l);
        l.start();
      }
      await().untilAsserted(() -> {
        PartitionRing r = new PartitionRing(PartitionRingDesc.parseFrom(stores.get(0).get("ingester-partitions")));
        assertThat(r.activePartitions()).containsExactly(0, 1, 2);
        assertThat(r.owners(1)).containsExactly("ingester-zone-a-1");
      });
    } finally {
      ls.forEach(PartitionLifecycler::close);
      stores.forEach(KvStore::close);
    }
  }
}
