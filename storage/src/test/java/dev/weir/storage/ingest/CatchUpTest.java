package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.progress.ProgressReporter;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a start-up catch-up round makes the reader ready, with a manual clock. */
class CatchUpTest {
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final CatchUp catchUp = new CatchUp(0, Duration.ofSeconds(15), now::get);

  @Test
  void roundNotReachedYetIsOn() {
    catchUp.startRound(1_000, 0);
    now.addAndGet(60_000);
    assertThat(catchUp.check(999)).as("even long after the start").isEqualTo(CatchUp.Outcome.ON);
    assertThat(catchUp.target()).isEqualTo(1_000);
  }

  @Test
  void roundReachedWithinTheMaxLagIsDone() {
    catchUp.startRound(1_000, 0);
    now.addAndGet(15_000);
    assertThat(catchUp.check(1_000)).isEqualTo(CatchUp.Outcome.DONE);
    assertThat(catchUp.check(1_500)).as("past the target").isEqualTo(CatchUp.Outcome.DONE);
  }

  @Test
  void roundReachedLaterThanTheMaxLagStartsAnotherRound() {
    catchUp.startRound(1_000, 0);
    now.addAndGet(15_001);
    assertThat(catchUp.check(1_000)).isEqualTo(CatchUp.Outcome.NEXT_ROUND);

    catchUp.startRound(1_200, 1_000);
    assertThat(catchUp.target()).isEqualTo(1_200);
    now.addAndGet(2_000);
    assertThat(catchUp.check(1_200)).as("the new round is timed from its own start").isEqualTo(CatchUp.Outcome.DONE);
  }

  @Test
  void zeroMaxLagDisablesTheCatchUp() {
    assertThat(new CatchUp(0, Duration.ZERO, now::get).disabled()).isTrue();
    assertThat(catchUp.disabled()).isFalse();
  }

  @Test
  void progressCountsFromTheFirstRoundToTheLatestEndAndFinishesWhenDone() {
    AtomicLong nanos = new AtomicLong();
    ProgressBoard board = new ProgressBoard(Duration.ofSeconds(10), nanos::get);
    CatchUp c = new CatchUp(3, Duration.ofSeconds(15), now::get, board);
    c.startRound(1_500, 500);
    c.logProgress(500, 1_500);
    nanos.addAndGet(Duration.ofSeconds(10).toNanos());
    c.logProgress(900, 1_700);   // the end moved on while reading
    ProgressReporter.Snapshot s = board.snapshots().get(0);
    assertThat(s.phase()).isEqualTo("catch-up");
    assertThat(s.context()).isEqualTo("partition=3");
    assertThat(s.done()).isEqualTo(400);
    assertThat(s.total()).isEqualTo(1_200);
    assertThat(s.ratePerSecond()).isEqualTo(40.0);
    assertThat(s.etaSeconds()).isEqualTo(20);

    now.addAndGet(15_001);
    assertThat(c.check(1_500)).isEqualTo(CatchUp.Outcome.NEXT_ROUND);
    c.startRound(1_800, 1_500);
    assertThat(board.snapshots()).hasSize(1);
    assertThat(board.snapshots().get(0).total()).as("still from the first round's start").isEqualTo(1_300);
    assertThat(c.check(1_800)).isEqualTo(CatchUp.Outcome.DONE);
    s = board.snapshots().get(0);
    assertThat(s.finished()).isTrue();
    assertThat(s.done()).isEqualTo(1_300);
    assertThat(s.etaSeconds()).isZero();
  }

  @Test
  void noProgressIsReportedWhenTheCatchUpIsDisabled() {
    ProgressBoard board = new ProgressBoard(Duration.ofSeconds(10), System::nanoTime);
    CatchUp c = new CatchUp(0, Duration.ZERO, now::get, board);
    c.startRound(1_000, 0);
    c.logProgress(10, 1_000);
    assertThat(board.snapshots()).isEmpty();
  }
}
