package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

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
  void progressLogDoesNotFailBeforeOrWithoutProgress() {
    catchUp.startRound(1_000, 0);
    catchUp.logProgress(0, 1_000, -1);
    now.addAndGet(10_000);
    catchUp.logProgress(0, 1_000, 12.5);
    now.addAndGet(10_000);
    catchUp.logProgress(500, 1_000, 3);
    assertThat(catchUp.check(500)).isEqualTo(CatchUp.Outcome.ON);
  }
}
