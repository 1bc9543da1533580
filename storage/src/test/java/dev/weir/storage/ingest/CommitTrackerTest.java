package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What {@link CommitTracker} allows to be committed, in Kafka's convention (the next offset to read). */
class CommitTrackerTest {
  private final CommitTracker tracker = new CommitTracker();

  private CommitTracker.Entry add(long offset, long timestamp) {
    CommitTracker.Entry e = new CommitTracker.Entry(offset, timestamp, 10);
    tracker.add(e);
    return e;
  }

  @Test
  void nothingIsCommittableBeforeTheFirstRecordIsDone() {
    add(0, 100);
    assertThat(tracker.committable()).isEqualTo(-1);
    assertThat(tracker.lastDoneTimestamp()).isEqualTo(-1);
    assertThat(new CommitTracker().committable()).as("empty tracker").isEqualTo(-1);
  }

  @Test
  void committableIsTheOffsetAfterTheLastDoneRecordOfTheContiguousPrefix() {
    CommitTracker.Entry a = add(5, 100);
    CommitTracker.Entry b = add(6, 200);
    add(7, 300);
    a.done();
    assertThat(tracker.committable()).as("5 done: next to read is 6").isEqualTo(6);
    b.done();
    assertThat(tracker.committable()).as("5 and 6 done: next to read is 7").isEqualTo(7);
  }

  @Test
  void aRecordInFlightHoldsBackEverythingAfterIt() {
    CommitTracker.Entry a = add(10, 1);
    CommitTracker.Entry b = add(11, 2);
    CommitTracker.Entry c = add(12, 3);
    CommitTracker.Entry d = add(13, 4);
    a.done();
    c.done();
    d.done();
    assertThat(tracker.committable()).as("11 in flight holds back 12 and 13").isEqualTo(11);
    assertThat(tracker.lastDoneTimestamp()).isEqualTo(1);
    assertThat(tracker.inFlight()).as("11, 12 and 13 stay tracked").isEqualTo(3);
    b.done();
    assertThat(tracker.committable()).isEqualTo(14);
  }

  @Test
  void recordsDoneOutOfOrderAreCommittedOnceTheGapCloses() {
    CommitTracker.Entry a = add(0, 10);
    CommitTracker.Entry b = add(1, 20);
    CommitTracker.Entry c = add(2, 30);
    c.done();
    b.done();
    assertThat(tracker.committable()).isEqualTo(-1);
    a.done();
    assertThat(tracker.committable()).isEqualTo(3);
    assertThat(tracker.lastDoneTimestamp()).as("the newest record of the done prefix").isEqualTo(30);
    assertThat(tracker.inFlight()).isZero();
  }

  @Test
  void committableStaysAtTheLastDonePrefixWhenNothingNewIsDone() {
    add(0, 10).done();
    assertThat(tracker.committable()).isEqualTo(1);
    add(1, 20);
    assertThat(tracker.committable()).isEqualTo(1);
    assertThat(tracker.lastDoneTimestamp()).isEqualTo(10);
  }

  @Test
  void inFlightCountsRecordsNotYetPartOfTheDonePrefix() {
    CommitTracker.Entry a = add(0, 1);
    add(1, 2);
    assertThat(tracker.inFlight()).isEqualTo(2);
    a.done();
    assertThat(tracker.inFlight()).as("counted until committable() takes the done prefix").isEqualTo(2);
    tracker.committable();
    assertThat(tracker.inFlight()).isEqualTo(1);
  }

  @Test
  void resetToForgetsPendingRecordsAndStartsFromTheGivenOffset() {
    add(0, 1);
    add(1, 2);
    tracker.resetTo(100);
    assertThat(tracker.inFlight()).isZero();
    assertThat(tracker.committable()).as("the position sought to is the next to read").isEqualTo(100);
    CommitTracker.Entry e = add(100, 3);
    assertThat(tracker.committable()).isEqualTo(100);
    e.done();
    assertThat(tracker.committable()).isEqualTo(101);
    assertThat(tracker.lastDoneTimestamp()).isEqualTo(3);
  }

  @Test
  void resetToALowerOffsetMovesTheCommittableOffsetBack() {
    add(50, 1).done();
    assertThat(tracker.committable()).isEqualTo(51);
    tracker.resetTo(0);
    assertThat(tracker.committable()).as("topic re-created: offsets start again").isEqualTo(0);
  }
}
