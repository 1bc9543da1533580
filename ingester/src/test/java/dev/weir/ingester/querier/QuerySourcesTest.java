package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.OwnerState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.errors.ServerErrorException;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class QuerySourcesTest {
  static final long NOW = 1_700_000_000_000L;
  static final long TIMEOUT = 60_000;

  final RingDesc.Builder instances = RingDesc.newBuilder();
  final PartitionRingDesc.Builder partitions = PartitionRingDesc.newBuilder();
  final RingDesc.Builder storeGateways = RingDesc.newBuilder();
  final AtomicBoolean kvConnected = new AtomicBoolean(true);

  static QuerierConfig config(List<String> storeGateways, List<String> ingesters) {
    return new QuerierConfig(storeGateways, ingesters, Duration.ofHours(12), Duration.ofHours(13), Duration.ofSeconds(5),
        0, Duration.ZERO, false);
  }

  QuerySources sources(QuerierConfig config, boolean kafka) {
    return new QuerySources(config, kafka, "zone-a", () -> new InstanceRing(instances.build(), NOW, TIMEOUT),
        () -> new PartitionRing(partitions.build()), () -> new InstanceRing(storeGateways.build(), NOW, TIMEOUT),
        kvConnected::get,
        addr -> InProcessChannelBuilder.forName(addr).build());
  }

  void instance(String id, String zone, InstanceState state, long heartbeatAgeMillis) {
    instances.putInstances(id, InstanceDesc.newBuilder().setId(id).setAddr(id + ":9095").setZone(zone).setState(state)
        .setHeartbeatTimestamp(NOW - heartbeatAgeMillis).build());
  }

  void partition(int id, PartitionState state, String... owners) {
    partitions.putPartitions(id, PartitionDesc.newBuilder().setId(id).setState(state).build());
    for (String o : owners) {
      partitions.putOwners(o, OwnerDesc.newBuilder().setOwnedPartition(id).setState(OwnerState.OWNER_ACTIVE).build());
    }
  }

  void storeGateway(String id, String zone, InstanceState state, long heartbeatAgeMillis) {
    storeGateways.putInstances(id, InstanceDesc.newBuilder().setId(id).setAddr(id + ":9095").setZone(zone)
        .setState(state).setHeartbeatTimestamp(NOW - heartbeatAgeMillis).build());
  }

  /** The first replica of each target. */
  static List<String> addresses(List<QuerySources.Target> targets) {
    return targets.stream().map(t -> t.replicas().get(0).address()).toList();
  }

  static List<String> replicas(QuerySources.Target target) {
    return target.replicas().stream().map(QuerySources.Source::address).toList();
  }

  @Test
  void classicModeAsksEveryInstanceThatMayHoldSeries() {
    instance("ingester-1", "", InstanceState.ACTIVE, 0);
    instance("ingester-2", "", InstanceState.LEAVING, 0);
    instance("ingester-3", "", InstanceState.JOINING, 0);
    instance("ingester-4", "", InstanceState.PENDING, TIMEOUT * 10);
    assertThat(addresses(sources(config(List.of(), List.of()), false).ingesters()))
        .containsExactly("ingester-1:9095", "ingester-2:9095", "ingester-3:9095");
  }

  @Test
  void classicModeFailsNamingAnUnhealthyInstanceRatherThanAnsweringWithoutItsSeries() {
    instance("ingester-1", "", InstanceState.ACTIVE, 0);
    instance("ingester-2", "", InstanceState.ACTIVE, TIMEOUT + 1_000);
    assertThatThrownBy(() -> sources(config(List.of(), List.of()), false).ingesters())
        .isInstanceOf(ServerErrorException.class).hasMessageContaining("ingester ingester-2 (ingester-2:9095) is unhealthy");
  }

  @Test
  void configuredIngesterAddressesReplaceTheRingInClassicMode() {
    instance("ingester-1", "", InstanceState.ACTIVE, TIMEOUT * 2);
    assertThat(addresses(sources(config(List.of("sg:1"), List.of("a:1", "b:1")), false).ingesters()))
        .containsExactly("a:1", "b:1");
  }

  @Test
  void kafkaModeAsksOneReadyOwnerPerActiveOrInactivePartitionOwnZoneFirst() {
    instance("ingester-zone-a-0", "zone-a", InstanceState.ACTIVE, 0);
    instance("ingester-zone-b-0", "zone-b", InstanceState.ACTIVE, 0);
    instance("ingester-zone-a-1", "zone-a", InstanceState.JOINING, 0);
    instance("ingester-zone-b-1", "zone-b", InstanceState.ACTIVE, 0);
    instance("ingester-zone-b-2", "zone-b", InstanceState.ACTIVE, 0);
    instance("ingester-zone-b-3", "zone-b", InstanceState.ACTIVE, 0);
    partition(0, PartitionState.PARTITION_ACTIVE, "ingester-zone-b-0", "ingester-zone-a-0");
    partition(1, PartitionState.PARTITION_ACTIVE, "ingester-zone-a-1", "ingester-zone-b-1");
    partition(2, PartitionState.PARTITION_INACTIVE, "ingester-zone-b-2");
    partition(3, PartitionState.PARTITION_PENDING, "ingester-zone-b-3");
    List<QuerySources.Target> s = sources(config(List.of(), List.of()), true).ingesters();
    assertThat(addresses(s)).containsExactly("ingester-zone-a-0:9095", "ingester-zone-b-1:9095",
        "ingester-zone-b-2:9095");
    assertThat(s.get(1).what()).isEqualTo("partition 1");
    assertThat(s.get(1).replicas().get(0).name()).contains("partition 1");
    assertThat(replicas(s.get(0))).as("the other zone's owner is the fallback")
        .containsExactly("ingester-zone-a-0:9095", "ingester-zone-b-0:9095");
    assertThat(replicas(s.get(1))).as("a JOINING owner is no replica").containsExactly("ingester-zone-b-1:9095");
  }

  @Test
  void kafkaModeFailsNamingAPartitionWithoutAHealthyReadyOwner() {
    instance("ingester-zone-a-0", "zone-a", InstanceState.ACTIVE, 0);
    instance("ingester-zone-a-1", "zone-a", InstanceState.JOINING, 0);
    instance("ingester-zone-b-1", "zone-b", InstanceState.ACTIVE, TIMEOUT * 2);
    partition(0, PartitionState.PARTITION_ACTIVE, "ingester-zone-a-0");
    partition(1, PartitionState.PARTITION_ACTIVE, "ingester-zone-a-1", "ingester-zone-b-1");
    assertThatThrownBy(() -> sources(config(List.of(), List.of()), true).ingesters())
        .isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("no healthy owner for partition 1")
        .hasMessageContaining("ingester-zone-a-1: JOINING, not ready")
        .hasMessageContaining("ingester-zone-b-1: last heartbeat 120s ago");
  }

  @Test
  void storeGatewaysKeepFlagOrderAndTheFlagReplacesTheRing() {
    storeGateway("sg-ring", "zone-a", InstanceState.ACTIVE, 0);
    List<QuerySources.Target> t = sources(config(List.of("sg-b:1", "sg-a:1"), List.of()), false).storeGateways("t");
    assertThat(addresses(t)).containsExactly("sg-b:1", "sg-a:1");
    assertThat(t).allSatisfy(target -> assertThat(target.replicas()).hasSize(1));
  }

  @Test
  void withoutAddressesTheStoreGatewayRingGivesOneTargetOfItsHealthyActiveMembersOwnZoneFirst() {
    QuerySources s = sources(config(List.of(), List.of()), false);
    assertThat(s.storeGateways("t")).as("an empty ring: no store-gateways to ask").isEmpty();
    storeGateway("sg-b-1", "zone-b", InstanceState.ACTIVE, 0);
    storeGateway("sg-a-1", "zone-a", InstanceState.ACTIVE, 0);
    storeGateway("sg-a-2", "zone-a", InstanceState.ACTIVE, 0);
    storeGateway("sg-a-3", "zone-a", InstanceState.JOINING, 0);
    storeGateway("sg-b-2", "zone-b", InstanceState.ACTIVE, TIMEOUT + 1);
    Set<String> firsts = new TreeSet<>();
    for (int i = 0; i < 20; i++) {
      List<QuerySources.Target> t = s.storeGateways("tenant-" + i);
      assertThat(t).hasSize(1);
      List<String> r = replicas(t.get(0));
      assertThat(r).hasSize(3).containsExactlyInAnyOrder("sg-a-1:9095", "sg-a-2:9095", "sg-b-1:9095");
      assertThat(r.get(2)).as("own zone first").isEqualTo("sg-b-1:9095");
      assertThat(s.storeGateways("tenant-" + i)).as("stable per tenant").isEqualTo(t);
      firsts.add(r.get(0));
    }
    assertThat(firsts).as("tenants spread over the replicas").containsExactly("sg-a-1:9095", "sg-a-2:9095");
  }

  @Test
  void aStoreGatewayRingWithoutAUsableMemberFailsNamingEach() {
    storeGateway("sg-1", "zone-a", InstanceState.JOINING, 0);
    storeGateway("sg-2", "zone-a", InstanceState.ACTIVE, TIMEOUT * 3);
    assertThatThrownBy(() -> sources(config(List.of(), List.of()), false).storeGateways("t"))
        .isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("no healthy ACTIVE store-gateway")
        .hasMessageContaining("sg-1: JOINING, not ready")
        .hasMessageContaining("sg-2: last heartbeat 180s ago");
  }

  @Test
  void readyOnlyOnceStartedAndTheRingWasReached() {
    kvConnected.set(false);
    QuerySources s = sources(config(List.of("sg:1"), List.of()), false);
    assertThat(s.notReadyReason()).contains("not set up");
    s.start();
    assertThat(s.notReadyReason()).contains("KV store");
    kvConnected.set(true);
    assertThat(s.notReadyReason()).isNull();
    kvConnected.set(false);
    assertThat(s.notReadyReason()).as("a KV outage later serves the last view, still ready").isNull();
    s.stop();
  }
}
