package dev.weir.ring.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ring.testing.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The etcd backend against a real etcd. */
class EtcdKvStoreIT {
  private static String str(byte[] b) {
    return b == null ? "<none>" : new String(b, StandardCharsets.UTF_8);
  }

  private static KvStore open(EtcdServer etcd, String prefix) {
    return KvConfig.etcd(prefix, List.of(etcd.endpoint())).open(KvMetrics.noop());
  }

  @Test
  void concurrentCasUpdatesAreRetriedAndNoneIsLost() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    String prefix = "test-" + UUID.randomUUID() + "/";
    KvMetrics metrics = KvMetrics.noop();
    try (KvStore kv = KvConfig.etcd(prefix, List.of(etcd.endpoint())).open(metrics)) {
      // Three writers (as three lifecyclers) start each round at the same instant, so every round
      // has CAS conflicts; all increments must land.
      int threads = 3;
      int each = 30;
      java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threads);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        fs.add(pool.submit(() -> {
          for (int i = 0; i < each; i++) {
            barrier.await();
            kv.cas("counter", cur -> String.valueOf(cur == null ? 1 : Integer.parseInt(str(cur)) + 1)
                .getBytes(StandardCharsets.UTF_8));
          }
          return null;
        }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
      pool.shutdown();
      assertThat(str(kv.get("counter"))).isEqualTo(String.valueOf(threads * each));
      assertThat(metrics.casConflicts.count()).as("the threads did conflict").isPositive();
      assertThat(etcd.etcdctl("get", "--prefix", prefix)).contains(prefix + "counter");
    }
  }

  @Test
  void watchSeesEveryChangeInOrder() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    try (KvStore kv = open(etcd, "test-" + UUID.randomUUID() + "/")) {
      List<String> seen = new CopyOnWriteArrayList<>();
      KvStore.Watch w = kv.watch("k", v -> seen.add(str(v)));
      await().until(() -> seen.size() == 1);
      for (int i = 0; i < 50; i++) {
        String v = String.valueOf(i);
        kv.cas("k", cur -> v.getBytes(StandardCharsets.UTF_8));
      }
      kv.delete("k");
      await().until(() -> seen.size() == 52);
      List<String> expected = new ArrayList<>(List.of("<none>"));
      for (int i = 0; i < 50; i++) {
        expected.add(String.valueOf(i));
      }
      expected.add("<none>");
      assertThat(seen).containsExactlyElementsOf(expected);
      w.close();
    }
  }

  @Test
  void casLeavesTheValueAloneWhenTheUpdateSaysSo() throws Exception {
    EtcdServer etcd = EtcdServer.shared();
    try (KvStore kv = open(etcd, "test-" + UUID.randomUUID() + "/")) {
      assertThat(kv.get("missing")).isNull();
      assertThat(kv.cas("missing", cur -> null)).isNull();
      assertThat(kv.get("missing")).isNull();
      kv.cas("x", cur -> "1".getBytes(StandardCharsets.UTF_8));
      assertThat(str(kv.cas("x", cur -> null))).isEqualTo("1");
    }
  }
}
