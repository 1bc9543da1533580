package dev.weir.ingester.testing;

import static org.awaitility.Awaitility.await;

import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Flags that put a Weir process in Kafka mode against a test broker and etcd, with a unique
 * topic and ring prefix so tests sharing the broker and etcd do not see each other.
 */
public final class KafkaCluster {
  public final KafkaBroker broker;
  public final EtcdServer etcd;
  public final String topic;
  public final String prefix;

  public KafkaCluster(KafkaBroker broker, EtcdServer etcd) {
    this.broker = broker;
    this.etcd = etcd;
    String id = UUID.randomUUID().toString().substring(0, 8);
    this.topic = "weir-" + id;
    this.prefix = "weir-" + id + "/";
  }

  /** Waits (30 s at most) until {@code w} sees {@code n} ACTIVE partitions in the partition ring. */
  public static void awaitActivePartitions(WeirProcess w, int n) {
    await().atMost(30, TimeUnit.SECONDS).until(() -> w.get("/ingester/partition-ring")
        .split("<td>ACTIVE</td>", -1).length - 1 == n);
  }

  /** Common flags plus {@code extra}. */
  public String[] args(String... extra) {
    List<String> a = new ArrayList<>(List.of(
        "--ingest-storage.enabled=true",
        "--ingest-storage.kafka.address=" + broker.bootstrap(),
        "--ingest-storage.kafka.topic=" + topic,
        "--ingester.ring.store=etcd",
        "--ingester.ring.etcd.endpoints=" + etcd.endpoint(),
        "--ingester.ring.prefix=" + prefix,
        "--ingester.ring.heartbeat-period=1s",
        "--ingester.ring.instance-addr=127.0.0.1",
        "--ingester.partition-ring.min-partition-owners-duration=0s"));
    a.addAll(List.of(extra));
    return a.toArray(String[]::new);
  }
}
