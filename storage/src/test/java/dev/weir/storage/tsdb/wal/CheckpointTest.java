package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {
  @TempDir Path dir;
  private final WalMetrics metrics = WalMetrics.noop();

  private final java.util.Set<Integer> logged = new java.util.HashSet<>();

  /** Appends a sample, preceded by the series record the first time, as the head does. */
  private void append(Wal wal, int ref, long t) {
    ByteSink b = new ByteSink(64);
    if (logged.add(ref)) {
      WalRecords.series(b, new int[] {ref}, new Labels[] {Labels.of("__name__", "s" + ref)}, 1);
    }
    WalRecords.samples(b, new int[] {ref}, new long[] {t}, new double[] {t}, 1);
    wal.append(b);
  }

  private List<String> replay() throws Exception {
    WalTest.Recorder r = new WalTest.Recorder();
    WalReader.replay(dir, r, false, metrics, "t");
    return r.events;
  }

  @Test
  void keepsLiveSeriesAndRecentSamplesAndDropsCoveredSegments() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      append(wal, 1, 100);
      append(wal, 2, 100);
      append(wal, 1, 200);
      int closed = wal.roll();
      append(wal, 3, 300); // after the checkpoint: must stay as it is
      // Series 2 left the head (truncated away); 1 and 3 are live.
      Checkpoint.create(dir, closed, ref -> ref != 2, 150, metrics, "t");
      // A second checkpoint reads the first one plus newer segments.
      int closed2 = wal.roll();
      append(wal, 1, 400);
      Checkpoint.create(dir, closed2, ref -> true, 0, metrics, "t");
    }
    assertThat(Checkpoint.latest(dir)).isNotNull().extracting(Checkpoint.Info::index).isEqualTo(1);
    assertThat(Files.exists(dir.resolve("checkpoint.00000000"))).isFalse();
    assertThat(Wal.segments(dir)).containsExactly(2);
    assertThat(replay()).containsExactly(
        "s 1 s1{}", "x 1 200 200.0",   // from the first checkpoint: ref 1 only, t >= 150
        "s 3 s3{}", "x 3 300 300.0",   // segment 1, taken into the second checkpoint
        "x 1 400 400.0");              // segment 2, after both
  }

  @Test
  void replayIgnoresSegmentsACheckpointAlreadyCovers() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      append(wal, 1, 100);
      int closed = wal.roll();
      append(wal, 1, 200);
      Checkpoint.create(dir, closed, ref -> true, 0, metrics, "t");
    }
    // Simulate a crash between writing the checkpoint and deleting the segment it covers.
    Files.copy(dir.resolve("checkpoint.00000000").resolve("00000000"), Wal.segmentPath(dir, 0));
    List<String> events = new ArrayList<>(replay());
    assertThat(events).containsExactly("s 1 s1{}", "x 1 100 100.0", "x 1 200 200.0");
  }

  @Test
  void theHighestSourceOffsetSurvivesACheckpoint() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      for (long source : new long[] {5, 9, 7}) { // concurrent shards log sources out of order
        ByteSink b = new ByteSink(16);
        WalRecords.source(b, source);
        wal.append(b);
        append(wal, 1, source * 100);
      }
      int closed = wal.roll();
      ByteSink b = new ByteSink(16);
      WalRecords.source(b, 3);
      wal.append(b);
      append(wal, 1, 1_000);
      Checkpoint.create(dir, closed, ref -> true, 0, metrics, "t");
    }
    assertThat(Wal.segments(dir)).as("the segments with offsets 5, 9, 7 are gone").containsExactly(1);
    WalReader.Result r = WalReader.replay(dir, new WalTest.Recorder(), false, metrics, "t");
    assertThat(r.maxSourceOffset()).isEqualTo(9);
  }
}
