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
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class QuerySourcesTest {
  static final long NOW = 1_700_000_000_000L;
  static final long TIMEOUT = 60_000;

  final RingDesc.Builder instances = RingDesc.newBuilder();
  final PartitionRingDesc.Builder partitions = PartitionRingDesc.newBuilder();
  final AtomicBoolean kvConnected = new AtomicBoolean(true);

  static QuerierConfig config(List<String> storeGateways, List<String> ingesters) {
    return new QuerierConfig(storeGateways, ingesters, Duration.ofHours(12), Duration.ofHours(13), Duration.ofSeconds(5),
        0, Duration.ZERO, false);
  }

  QuerySources sources(QuerierConfig config, boolean kafka) {
    return new QuerySources(config, kafka, "zone-a", () -> new InstanceRing(instances.build(), NOW, TIMEOUT),
        () -> new PartitionRing(partitions.build()), kvConnected::get,
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

  static List<String> addresses(List<QuerySources.Source> sources) {
    return sources.stream().map(QuerySources.Source::address).toList();
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
    List<QuerySources.Source> s = sources(config(List.of(), List.of()), true).ingesters();
    assertThat(addresses(s)).containsExactly("ingester-zone-a-0:9095", "ingester-zone-b-1:9095",
        "ingester-zone-b-2:9095");
    assertThat(s.get(1).name()).contains("partition 1");
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
  void storeGatewaysKeepFlagOrder() {
    assertThat(addresses(sources(config(List.of("sg-b:1", "sg-a:1"), List.of()), false).storeGateways()))
        .containsExactly("sg-b:1", "sg-a:1");
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
