package dev.weir.ingester.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.ingest.DownscaleReadiness.Decision;
import dev.weir.ingester.ingest.DownscaleReadiness.Storage;
import dev.weir.ingester.ingest.DownscaleReadiness.StorageState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionState;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DownscaleReadinessTest {
  static final long SWITCH = 1_700_000_000_000L;
  static final Duration LOOKBACK = Duration.ofHours(13);
  static final Storage SHIPPED = new Storage(true, 0, 0, -1);

  private static PartitionDesc partition(PartitionState state) {
    return PartitionDesc.newBuilder().setId(7).setState(state).setStateTimestamp(SWITCH).build();
  }

  @Test
  void inactiveLongerThanTheLookBackWithEverythingShippedMayLeave() {
    Decision d = DownscaleReadiness.decide(partition(PartitionState.PARTITION_INACTIVE),
        SWITCH + LOOKBACK.toMillis(), LOOKBACK, SHIPPED);
    assertThat(d.readyToLeave()).isTrue();
    assertThat(d.inactiveLongEnough()).isTrue();
    assertThat(d.storage()).isEqualTo(StorageState.OK);
    assertThat(d.leaveAfterMillis()).isEqualTo(SWITCH + LOOKBACK.toMillis());
    assertThat(d.reasons()).isEmpty();
  }

  @Test
  void oneMillisecondShortOfTheLookBackMayNotLeave() {
    Decision d = DownscaleReadiness.decide(partition(PartitionState.PARTITION_INACTIVE),
        SWITCH + LOOKBACK.toMillis() - 1, LOOKBACK, SHIPPED);
    assertThat(d.readyToLeave()).isFalse();
    assertThat(d.inactiveLongEnough()).isFalse();
    assertThat(d.storage()).isEqualTo(StorageState.OK);
    assertThat(d.reasons()).singleElement().asString().contains("querier.query-ingesters-within");
  }

  @Test
  void activeOrPendingPartitionMayNotLeaveWhatEverTheTime() {
    for (PartitionState s : new PartitionState[] {PartitionState.PARTITION_ACTIVE, PartitionState.PARTITION_PENDING}) {
      Decision d = DownscaleReadiness.decide(partition(s), SWITCH + 100 * LOOKBACK.toMillis(), LOOKBACK, SHIPPED);
      assertThat(d.readyToLeave()).isFalse();
      assertThat(d.leaveAfterMillis()).isZero();
      assertThat(d.reasons()).singleElement().asString().contains("POST /ingester/prepare-partition-downscale");
    }
  }

  @Test
  void unshippedBlocksOrAHeadWithSeriesKeepTheIngester() {
    long late = SWITCH + 2 * LOOKBACK.toMillis();
    PartitionDesc p = partition(PartitionState.PARTITION_INACTIVE);
    Decision pending = DownscaleReadiness.decide(p, late, LOOKBACK, new Storage(true, 2, 0, -1));
    assertThat(pending.readyToLeave()).isFalse();
    assertThat(pending.inactiveLongEnough()).isTrue();
    assertThat(pending.storage()).isEqualTo(StorageState.PENDING);
    assertThat(pending.reasons()).singleElement().asString().contains("2 local block(s)");
    Decision head = DownscaleReadiness.decide(p, late, LOOKBACK, new Storage(true, 0, 5, -1));
    assertThat(head.storage()).isEqualTo(StorageState.PENDING);
    assertThat(head.reasons()).singleElement().asString().contains("head holds 5 series");
    Decision noRound = DownscaleReadiness.decide(p, late, LOOKBACK, new Storage(true, -1, 0, -1));
    assertThat(noRound.storage()).isEqualTo(StorageState.PENDING);
    assertThat(noRound.reasons()).singleElement().asString().contains("not completed a round");
  }

  @Test
  void withBlockBuildersOfUnknownProgressTheStorageIsUncheckedAndTheIngesterIsNotDeclaredReady() {
    Decision d = DownscaleReadiness.decide(partition(PartitionState.PARTITION_INACTIVE),
        SWITCH + 2 * LOOKBACK.toMillis(), LOOKBACK, new Storage(false, -1, 7, -1));
    assertThat(d.inactiveLongEnough()).isTrue();
    assertThat(d.storage()).isEqualTo(StorageState.UNCHECKED);
    assertThat(d.readyToLeave()).isFalse();
    assertThat(d.reasons()).singleElement().asString().contains("block-builder's progress is unknown");
  }

  @Test
  void withBlockBuildersTheGroupMustHaveBuiltThePartitionToItsEndWhateverTheHead() {
    long late = SWITCH + 2 * LOOKBACK.toMillis();
    PartitionDesc p = partition(PartitionState.PARTITION_INACTIVE);
    Decision behind = DownscaleReadiness.decide(p, late, LOOKBACK, new Storage(false, -1, 7, 3));
    assertThat(behind.storage()).isEqualTo(StorageState.PENDING);
    assertThat(behind.readyToLeave()).isFalse();
    assertThat(behind.reasons()).singleElement().asString().contains("3 record(s)");
    Decision built = DownscaleReadiness.decide(p, late, LOOKBACK, new Storage(false, -1, 7, 0));
    assertThat(built.storage()).isEqualTo(StorageState.OK);
    assertThat(built.readyToLeave()).isTrue();
  }

  @Test
  void zeroLookBackNeverMeetsTheTimeCondition() {
    Decision d = DownscaleReadiness.decide(partition(PartitionState.PARTITION_INACTIVE), Long.MAX_VALUE / 2,
        Duration.ZERO, SHIPPED);
    assertThat(d.readyToLeave()).isFalse();
    assertThat(d.inactiveLongEnough()).isFalse();
    assertThat(d.reasons()).singleElement().asString().contains("is 0");
  }
}
