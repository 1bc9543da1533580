package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.ingester.ingest.PrepareDownscaleApi.Response;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.kv.InMemoryKvStore;
import dev.weir.ring.kv.KvException;
import dev.weir.ring.kv.KvStore;
import dev.weir.ring.lifecycle.PartitionLifecycler;
import dev.weir.ring.lifecycle.RingMetrics;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PrepareDownscaleApiTest {
  static final String KEY = "ingester-partitions";
  static final ObjectMapper JSON = new ObjectMapper();

  private final DownableKvStore kv = new DownableKvStore();
  private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
  private final java.util.concurrent.atomic.AtomicInteger flushes = new java.util.concurrent.atomic.AtomicInteger();
  private PartitionLifecycler lifecycler;
  private PrepareDownscaleApi api;

  @BeforeEach
  void setUp() {
    lifecycler = new PartitionLifecycler(new PartitionLifecycler.Config(KEY, 1, "ingester-zone-a-1", 16, 1,
        Duration.ZERO, Duration.ofHours(1), false, Duration.ZERO), kv, RingMetrics.noop(), clock::get);
    lifecycler.start();
    api = new PrepareDownscaleApi(new PrepareDownscaleApi.OwnPartition() {
      @Override
      public PartitionDesc changeState(PartitionState target) {
        return lifecycler.changeState(target);
      }

      @Override
      public @Nullable PartitionDesc partition() {
        return lifecycler.partition();
      }

      @Override
      public PartitionDesc setStateLocked(boolean locked) {
        return lifecycler.setStateLocked(locked);
      }

      @Override
      public int partitionId() {
        return 1;
      }

      @Override
      public String ownerId() {
        return "ingester-zone-a-1";
      }

      @Override
      public java.util.Map<String, dev.weir.proto.ring.OwnerDesc> owners() {
        return lifecycler.owners();
      }
    }, Duration.ofHours(13), () -> new DownscaleReadiness.Storage(true, 0, 0, -1), clock::get,
        flushes::incrementAndGet);
  }

  @AfterEach
  void tearDown() {
    lifecycler.close();
    kv.close();
  }

  private static PartitionRingDesc ring(byte @Nullable [] b) {
    try {
      return b == null ? PartitionRingDesc.getDefaultInstance() : PartitionRingDesc.parseFrom(b);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }

  private PartitionDesc stored() {
    return ring(kv.get(KEY)).getPartitionsOrThrow(1);
  }

  private static JsonNode json(Response r) throws Exception {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  @Test
  void postSetsInactiveWithTheSwitchTimeInSecondsAndDeleteRevertsToActive() throws Exception {
    assertThat(json(api.get()).get("timestamp").asLong()).isZero();
    assertThat(json(api.get()).get("state").asText()).isEqualTo("ACTIVE");
    clock.set(1_700_000_123_456L);
    JsonNode posted = json(api.change(PartitionState.PARTITION_INACTIVE));
    assertThat(posted.get("timestamp").asLong()).isEqualTo(1_700_000_123L);
    assertThat(stored().getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
    clock.addAndGet(60_000);
    JsonNode got = json(api.get());
    assertThat(got.get("timestamp").asLong()).isEqualTo(1_700_000_123L);
    assertThat(got.get("ready_to_leave").asBoolean()).isFalse();
    assertThat(got.get("leave_after").asLong()).isEqualTo(1_700_000_123L + 13 * 3600);
    clock.addAndGet(Duration.ofHours(13).toMillis());
    assertThat(json(api.get()).get("ready_to_leave").asBoolean()).isTrue();
    JsonNode deleted = json(api.change(PartitionState.PARTITION_ACTIVE));
    assertThat(deleted.get("timestamp").asLong()).isZero();
    assertThat(deleted.get("state").asText()).isEqualTo("ACTIVE");
    assertThat(stored().getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
  }

  @Test
  void partitionMayGoOnlyWhenEveryZonesOwnerIsReadyAndEveryOwnerLeavesWhenItStops() throws Exception {
    AtomicBoolean zoneBReady = new AtomicBoolean();
    PartitionLifecycler zoneB = new PartitionLifecycler(new PartitionLifecycler.Config(KEY, 1, "ingester-zone-b-1",
        16, 1, Duration.ZERO, Duration.ofMillis(20), false, Duration.ZERO), kv, RingMetrics.noop(), clock::get);
    zoneB.reportReadyToLeave(p -> zoneBReady.get());
    zoneB.start();
    try {
      // One POST, on zone a's owner, drains the partition in both zones (one state in the ring).
      json(api.change(PartitionState.PARTITION_INACTIVE));
      clock.addAndGet(Duration.ofHours(13).toMillis());
      JsonNode r = json(api.get());
      assertThat(r.get("ready_to_leave").asBoolean()).as("zone a's own readiness").isTrue();
      assertThat(r.get("all_owners_ready_to_leave").asBoolean()).as(r.toString()).isFalse();
      assertThat(r.get("owners").toString()).isEqualTo("[{\"id\":\"ingester-zone-a-1\",\"ready_to_leave\":true,"
          + "\"self\":true},{\"id\":\"ingester-zone-b-1\",\"ready_to_leave\":false,\"self\":false}]");
      zoneBReady.set(true);
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(json(api.get()).get("all_owners_ready_to_leave").asBoolean()).isTrue());
      // Zone b was never asked to prepare; it leaves the ring anyway, the partition being INACTIVE
      // (removeOwnerOnShutdown is false here).
      zoneB.close();
      assertThat(ring(kv.get(KEY)).getOwnersMap()).containsOnlyKeys("ingester-zone-a-1");
    } finally {
      zoneB.close();
    }
  }

  @Test
  void ownerOfAnActivePartitionKeepsItsEntryWhenItStops() {
    PartitionLifecycler zoneB = new PartitionLifecycler(new PartitionLifecycler.Config(KEY, 1, "ingester-zone-b-1",
        16, 1, Duration.ZERO, Duration.ofHours(1), false, Duration.ZERO), kv, RingMetrics.noop(), clock::get);
    zoneB.start();
    zoneB.close();
    assertThat(ring(kv.get(KEY)).getOwnersMap()).containsOnlyKeys("ingester-zone-a-1", "ingester-zone-b-1");
  }

  @Test
  void flushRunsOnlyOnceThePartitionIsInactive() throws Exception {
    Response active = api.flush();
    assertThat(active.status()).isEqualTo(409);
    assertThat(active.body()).contains("is ACTIVE");
    assertThat(flushes.get()).isZero();
    api.change(PartitionState.PARTITION_INACTIVE);
    assertThat(json(api.flush()).get("blocks").asInt()).isEqualTo(1);
    assertThat(flushes.get()).isEqualTo(1);
  }

  @Test
  void lockedPartitionRefusesBothDirectionsUntilUnlocked() throws Exception {
    assertThat(json(api.lock(true)).get("state_change_locked").asBoolean()).isTrue();
    assertThat(api.change(PartitionState.PARTITION_INACTIVE).status()).isEqualTo(409);
    assertThat(json(api.lock(false)).get("state_change_locked").asBoolean()).isFalse();
    json(api.change(PartitionState.PARTITION_INACTIVE));
    json(api.lock(true));
    Response delete = api.change(PartitionState.PARTITION_ACTIVE);
    assertThat(delete.status()).isEqualTo(409);
    assertThat(stored().getState()).isEqualTo(PartitionState.PARTITION_INACTIVE);
    assertThat(stored().getStateChangeLocked()).isTrue();
  }

  @Test
  void removedPartitionIsNotFoundAndLockedOneConflicts() {
    kv.cas(KEY, cur -> ring(cur).toBuilder().putPartitions(1, stored().toBuilder()
        .setStateChangeLocked(true).build()).build().toByteArray());
    Response locked = api.change(PartitionState.PARTITION_INACTIVE);
    assertThat(locked.status()).isEqualTo(409);
    assertThat(locked.body()).contains("locked");
    assertThat(stored().getState()).isEqualTo(PartitionState.PARTITION_ACTIVE);
    kv.cas(KEY, cur -> ring(cur).toBuilder().removePartitions(1).build().toByteArray());
    assertThat(api.change(PartitionState.PARTITION_INACTIVE).status()).isEqualTo(404);
    assertThat(api.get().status()).isEqualTo(404);
    assertThat(ring(kv.get(KEY)).getPartitionsMap()).doesNotContainKey(1);
  }

  @Test
  void pendingPartitionCannotBeMadeInactive() {
    kv.cas(KEY, cur -> ring(cur).toBuilder().putPartitions(1, stored().toBuilder()
        .setState(PartitionState.PARTITION_PENDING).build()).build().toByteArray());
    Response r = api.change(PartitionState.PARTITION_INACTIVE);
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.body()).contains("PENDING");
    assertThat(stored().getState()).isEqualTo(PartitionState.PARTITION_PENDING);
  }

  @Test
  void kvStoreDownIsUnavailableAndChangesNothing() throws Exception {
    PartitionRingDesc before = ring(kv.get(KEY));
    kv.down.set(true);
    Response post = api.change(PartitionState.PARTITION_INACTIVE);
    assertThat(post.status()).isEqualTo(503);
    assertThat(post.body()).contains("nothing was changed").contains("etcd unreachable (test)");
    assertThat(api.get().status()).isEqualTo(503);
    kv.down.set(false);
    assertThat(ring(kv.get(KEY))).isEqualTo(before);
    assertThat(json(api.get()).get("state").asText()).isEqualTo("ACTIVE");
  }

  /** An in-memory store whose every call fails while {@link #down} is set, like an unreachable etcd. */
  static final class DownableKvStore implements KvStore {
    final AtomicBoolean down = new AtomicBoolean();
    private final InMemoryKvStore delegate = new InMemoryKvStore();

    private void check() {
      if (down.get()) {
        throw new KvException("etcd unreachable (test)");
      }
    }

    @Override
    public byte @Nullable [] get(String key) {
      check();
      return delegate.get(key);
    }

    @Override
    public byte @Nullable [] cas(String key, UnaryOperator<byte @Nullable []> update) {
      check();
      return delegate.cas(key, update);
    }

    @Override
    public void delete(String key) {
      check();
      delegate.delete(key);
    }

    @Override
    public Watch watch(String key, WatchListener listener) {
      return delegate.watch(key, listener);
    }

    @Override
    public String fullKey(String key) {
      return delegate.fullKey(key);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
