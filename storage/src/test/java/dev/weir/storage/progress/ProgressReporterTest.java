package dev.weir.storage.progress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** Progress lines and snapshots with a manual clock: when lines come, and their done/total, rate and ETA. */
class ProgressReporterTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong nanos = new AtomicLong(123 * SECOND);
  private final Lines log = new Lines();
  private final ProgressBoard board = new ProgressBoard(Duration.ofSeconds(10), nanos::get);

  @Test
  void logsTheStartThenOneLinePerIntervalWithRateAndTimeLeftThenTheEnd() {
    ProgressReporter p = board.begin(log, "WAL replay", "tenants=2", "bytes", 1_000);
    assertThat(log.lines).containsExactly("msg=\"WAL replay starting\" tenants=2 total=1000 unit=bytes");

    nanos.addAndGet(SECOND);
    p.update(100);
    nanos.addAndGet(8 * SECOND);
    p.add(100);
    assertThat(log.lines).as("no line before the interval is over").hasSize(1);

    nanos.addAndGet(SECOND);   // 10 s after the start: 200 bytes in 10 s
    p.add(50);
    nanos.addAndGet(5 * SECOND);
    p.update(400);
    nanos.addAndGet(5 * SECOND);   // 10 s after the last line: 400 - 250 more
    p.update(650);
    assertThat(log.lines).containsExactly(
        "msg=\"WAL replay starting\" tenants=2 total=1000 unit=bytes",
        "msg=\"WAL replay progress\" tenants=2 done=250 total=1000 unit=bytes percent=25.0 rate_per_s=25 eta_s=30",
        "msg=\"WAL replay progress\" tenants=2 done=650 total=1000 unit=bytes percent=65.0 rate_per_s=40 eta_s=9");

    nanos.addAndGet(5 * SECOND);
    p.update(1_000);
    p.finish();
    p.finish();
    assertThat(log.lines).hasSize(4).last()
        .isEqualTo("msg=\"WAL replay done\" tenants=2 done=1000 total=1000 unit=bytes seconds=25.00 rate_per_s=40");
  }

  @Test
  void snapshotShowsTheLastIntervalsRateWhileRunningAndTheAverageOnceFinished() {
    ProgressReporter p = board.begin(log, "catch-up", "partition=1", "records", 600);
    nanos.addAndGet(2 * SECOND);
    p.update(100);
    ProgressReporter.Snapshot s = p.snapshot();
    assertThat(s.ratePerSecond()).as("average before the first interval").isEqualTo(50.0);
    assertThat(s.etaSeconds()).isEqualTo(10);
    assertThat(s.elapsedMillis()).isEqualTo(2_000);
    assertThat(s.finished()).isFalse();

    nanos.addAndGet(8 * SECOND);
    p.update(300);   // line: 300 in 10 s
    nanos.addAndGet(5 * SECOND);
    p.update(350);   // no line: the rate stays the last interval's
    s = p.snapshot();
    assertThat(s.ratePerSecond()).isEqualTo(30.0);
    assertThat(s.percent()).isCloseTo(58.33, org.assertj.core.data.Offset.offset(0.01));
    assertThat(s.etaSeconds()).isEqualTo(9);   // 250 left at 30/s, rounded up

    p.finish();
    nanos.addAndGet(100 * SECOND);
    s = p.snapshot();
    assertThat(s.finished()).isTrue();
    assertThat(s.elapsedMillis()).as("frozen at the end").isEqualTo(15_000);
    assertThat(s.ratePerSecond()).isCloseTo(350 / 15.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(s.etaSeconds()).isZero();
  }

  @Test
  void withoutTotalOrProgressThePercentAndTimeLeftAreUnknown() {
    ProgressReporter p = board.begin(log, "block-builder cycle", "", "records", 0);
    nanos.addAndGet(10 * SECOND);
    p.update(0);
    assertThat(log.lines).last()
        .isEqualTo("msg=\"block-builder cycle progress\" done=0 total=0 unit=records percent=unknown rate_per_s=0"
            + " eta_s=unknown");
    assertThat(p.snapshot().percent()).isNaN();
    assertThat(p.snapshot().etaSeconds()).isEqualTo(-1);
  }

  @Test
  void zeroIntervalLogsEveryUpdate() {
    ProgressReporter p = new ProgressBoard(Duration.ZERO, nanos::get).begin(log, "x", "", "records", 3);
    p.update(1);
    p.update(2);
    p.update(3);
    assertThat(log.lines).hasSize(4);
    assertThat(log.lines.get(1)).contains("done=1 total=3").contains("rate_per_s=unknown");
  }

  @Test
  void theTotalFollowsAMovingEnd() {
    ProgressReporter p = board.begin(log, "catch-up", "partition=0", "records", 100);
    p.total(250);
    nanos.addAndGet(10 * SECOND);
    p.update(50);
    assertThat(log.lines).last().asString().contains("done=50 total=250").contains("percent=20.0").contains("eta_s=40");
  }

  @Test
  void boardKeepsTheLatestReporterOfEachPhaseAndContextBounded() {
    ProgressReporter first = board.begin(log, "catch-up", "partition=0", "records", 10);
    first.update(10);
    first.finish();
    board.begin(log, "WAL replay", "", "bytes", 5);
    board.begin(log, "catch-up", "partition=0", "records", 20);
    assertThat(board.snapshots()).extracting(ProgressReporter.Snapshot::phase, ProgressReporter.Snapshot::total)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("WAL replay", 5L),
            org.assertj.core.groups.Tuple.tuple("catch-up", 20L));
    for (int i = 0; i < 40; i++) {
      board.begin(log, "block-builder cycle", "partition=" + i, "records", i);
    }
    assertThat(board.snapshots()).hasSize(ProgressBoard.KEPT).last()
        .extracting(ProgressReporter.Snapshot::context).isEqualTo("partition=39");
    assertThatThrownBy(() -> new ProgressBoard(Duration.ofSeconds(-1), nanos::get))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** A logger keeping the formatted INFO lines. */
  static final class Lines extends AbstractLogger {
    private static final long serialVersionUID = 1L;
    final List<String> lines = new ArrayList<>();

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] args,
        Throwable t) {
      lines.add(MessageFormatter.basicArrayFormat(pattern, args));
    }

    @Override
    public boolean isTraceEnabled() {
      return false;
    }

    @Override
    public boolean isTraceEnabled(Marker marker) {
      return false;
    }

    @Override
    public boolean isDebugEnabled() {
      return false;
    }

    @Override
    public boolean isDebugEnabled(Marker marker) {
      return false;
    }

    @Override
    public boolean isInfoEnabled() {
      return true;
    }

    @Override
    public boolean isInfoEnabled(Marker marker) {
      return true;
    }

    @Override
    public boolean isWarnEnabled() {
      return true;
    }

    @Override
    public boolean isWarnEnabled(Marker marker) {
      return true;
    }

    @Override
    public boolean isErrorEnabled() {
      return true;
    }

    @Override
    public boolean isErrorEnabled(Marker marker) {
      return true;
    }
  }
}
