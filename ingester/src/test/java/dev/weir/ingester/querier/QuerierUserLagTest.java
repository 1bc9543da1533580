package dev.weir.ingester.querier;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.api.UserLag;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.ingester.PartitionLag;
import dev.weir.proto.ingester.UserLagRequest;
import dev.weir.proto.ingester.UserLagResponse;
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
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The querier's user_lag over two zones: a failing owner is replaced by the other zone's. */
class QuerierUserLagTest {
  static final long NOW = 1_700_000_000_000L;

  final String prefix = InProcessServerBuilder.generateName();
  final List<Server> servers = new ArrayList<>();
  final RingDesc.Builder instances = RingDesc.newBuilder();
  final PartitionRingDesc.Builder partitions = PartitionRingDesc.newBuilder();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stop() {
    servers.forEach(Server::shutdownNow);
  }

  /** An ingester owning {@code partition} that answers user_lag, or fails with {@code failure}. */
  AtomicInteger ingester(String id, String zone, int partition, Status failure) throws Exception {
    AtomicInteger calls = new AtomicInteger();
    IngesterGrpc.IngesterImplBase impl = new IngesterGrpc.IngesterImplBase() {
      @Override
      public void userLag(UserLagRequest request, StreamObserver<UserLagResponse> out) {
        calls.incrementAndGet();
        if (failure != null) {
          out.onError(failure.asRuntimeException());
          return;
        }
        out.onNext(UserLagResponse.newBuilder().setInstanceId(id).setSeries(7).setNewestSampleMs(NOW - 1_000)
            .addPartitions(PartitionLag.newBuilder().setPartition(partition).setConsumedOffset(90).setEndOffset(100)
                .setRecordsBehind(10).setConsumedUpToMs(NOW - 2_000).setReady(true))
            .build());
        out.onCompleted();
      }
    };
    servers.add(InProcessServerBuilder.forName(prefix + id).addService(impl).build().start());
    instances.putInstances(id, InstanceDesc.newBuilder().setId(id).setAddr(prefix + id).setZone(zone)
        .setState(InstanceState.ACTIVE).setHeartbeatTimestamp(NOW).build());
    partitions.putPartitions(partition, PartitionDesc.newBuilder().setId(partition)
        .setState(PartitionState.PARTITION_ACTIVE).build());
    partitions.putOwners(id, OwnerDesc.newBuilder().setOwnedPartition(partition).setState(OwnerState.OWNER_ACTIVE)
        .build());
    return calls;
  }

  Querier querier() {
    QuerierConfig config = new QuerierConfig(List.of(), List.of(), Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5),
        0, Duration.ZERO, false);
    QuerySources sources = new QuerySources(config, true, "zone-a",
        () -> new InstanceRing(instances.build(), NOW, 60_000), () -> new PartitionRing(partitions.build()),
        () -> new InstanceRing(RingDesc.getDefaultInstance(), NOW, 60_000), () -> true,
        addr -> InProcessChannelBuilder.forName(addr).build());
    sources.start();
    return new Querier(config, sources, QueryLimits.UNLIMITED, new QuerierMetrics(registry), () -> NOW);
  }

  @Test
  void anOwnerFailingWithAServerErrorIsReplacedByTheOtherZonesOwner() throws Exception {
    AtomicInteger a0 = ingester("ingester-zone-a-0", "zone-a", 0, Status.UNAVAILABLE.withDescription("going away"));
    AtomicInteger b0 = ingester("ingester-zone-b-0", "zone-b", 0, null);
    ingester("ingester-zone-a-1", "zone-a", 1, null);

    List<UserLag.Row> rows = querier().userLag("tenant-1");

    assertThat(a0.get()).as("own zone asked first").isEqualTo(1);
    assertThat(b0.get()).as("then the other zone's owner").isEqualTo(1);
    assertThat(rows).extracting(UserLag.Row::partition, UserLag.Row::owner, UserLag.Row::error)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(0, "ingester-zone-b-0", null),
            org.assertj.core.groups.Tuple.tuple(1, "ingester-zone-a-1", null));
    assertThat(rows.get(0).freshness()).isNotNull();
    assertThat(rows.get(0).freshness().recordsBehind()).isEqualTo(10);
    assertThat(registry.counter("weir.querier.source.failovers", "kind", "ingester").count()).isEqualTo(1);
  }

  @Test
  void aPartitionWhoseEveryOwnerFailsIsARowNamingEachWhileTheOthersAnswer() throws Exception {
    ingester("ingester-zone-a-0", "zone-a", 0, Status.UNAVAILABLE.withDescription("going away"));
    ingester("ingester-zone-b-0", "zone-b", 0, Status.INTERNAL.withDescription("disk on fire"));
    ingester("ingester-zone-a-1", "zone-a", 1, null);

    List<UserLag.Row> rows = querier().userLag("tenant-1");

    assertThat(rows).hasSize(2);
    assertThat(rows.get(0).partition()).isZero();
    assertThat(rows.get(0).freshness()).isNull();
    assertThat(rows.get(0).error()).contains("going away").contains("disk on fire");
    assertThat(rows.get(1).owner()).isEqualTo("ingester-zone-a-1");
    assertThat(rows.get(1).error()).isNull();
  }
}
