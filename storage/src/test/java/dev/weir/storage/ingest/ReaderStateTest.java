package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReaderStateTest {
  private final ReaderState state = new ReaderState(3);

  @Test
  void freshnessIsUnknownBeforeAnythingIsConsumedOrProbed() {
    PartitionFreshness f = state.freshness();
    assertThat(f.partition()).isEqualTo(3);
    assertThat(f.recordsBehind()).isEqualTo(-1);
    assertThat(f.consumedUpToMillis()).isEqualTo(-1);
    assertThat(f.lagSeconds(10_000)).isEqualTo(-1);
  }

  @Test
  void consumedUpToIsTheProbeTimeOnceTheReaderReachedItsEndOffset() {
    state.caughtUp(true);
    state.applied(90, 1_000);
    state.endProbe(100, 5_000);
    PartitionFreshness behind = state.freshness();
    assertThat(behind.recordsBehind()).isEqualTo(10);
    assertThat(behind.consumedUpToMillis()).as("last record consumed").isEqualTo(1_000);
    assertThat(behind.lagSeconds(7_000)).isEqualTo(6.0);

    state.applied(100, 4_000);
    PartitionFreshness reached = state.freshness();
    assertThat(reached.recordsBehind()).isZero();
    assertThat(reached.consumedUpToMillis()).as("the probe's send time").isEqualTo(5_000);
    assertThat(reached.ready()).isTrue();
  }

  @Test
  void aNewerProbeAheadOfTheReaderKeepsTheEarlierCoveredTime() {
    state.applied(100, 4_000);
    state.endProbe(100, 5_000);
    state.endProbe(120, 6_000);
    PartitionFreshness f = state.freshness();
    assertThat(f.recordsBehind()).isEqualTo(20);
    assertThat(f.consumedUpToMillis()).isEqualTo(5_000);
  }

  @Test
  void movingBackForgetsWhatWasConsumed() {
    state.applied(100, 4_000);
    state.endProbe(100, 5_000);
    state.movedBack();
    state.applied(10);
    assertThat(state.freshness().consumedUpToMillis()).isEqualTo(-1);
  }

  @Test
  void anEndOffsetReadByTheReaderReplacesAHigherOneSeenBefore() {
    state.applied(10, 1_000);
    state.endProbe(50, 2_000);
    state.endOffsetRead(10, 3_000);
    PartitionFreshness f = state.freshness();
    assertThat(f.endOffset()).as("a truncated or re-created partition").isEqualTo(10);
    assertThat(f.recordsBehind()).isZero();
    assertThat(f.consumedUpToMillis()).isEqualTo(3_000);
  }

  @Test
  void notReadyWhileCatchingUp() {
    state.applied(1, 1);
    assertThat(state.freshness().ready()).isFalse();
  }
}
