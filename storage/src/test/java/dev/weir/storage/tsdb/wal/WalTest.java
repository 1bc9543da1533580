package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.testing.Corrupt;
import dev.weir.storage.testing.FaultyChannel;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WalTest {
  @TempDir Path dir;
  private final WalMetrics metrics = WalMetrics.noop();

  /** What a replay saw, as "s ref labels" and "x ref t v" lines. */
  static final class Recorder implements WalRecords.Visitor {
    final List<String> events = new ArrayList<>();

    @Override
    public void series(int ref, Labels labels) {
      events.add("s " + ref + " " + labels);
    }

    @Override
    public void sample(int ref, long t, double v) {
      events.add("x " + ref + " " + t + " " + v);
    }
  }

  private static ByteSink batch(int ref, long t) {
    ByteSink b = new ByteSink(64);
    WalRecords.series(b, new int[] {ref}, new Labels[] {Labels.of("__name__", "m", "i", String.valueOf(ref))}, 1);
    WalRecords.samples(b, new int[] {ref, ref}, new long[] {t, t + 1}, new double[] {1.5, -2}, 2);
    return b;
  }

  private List<String> replay(boolean repair) throws Exception {
    Recorder r = new Recorder();
    WalReader.replay(dir, r, repair, metrics, "t");
    return r.events;
  }

  private Path lastSegment() throws IOException {
    List<Integer> s = Wal.segments(dir);
    return Wal.segmentPath(dir, s.get(s.size() - 1));
  }

  @Test
  void replaysWhatWasAppendedAcrossSegments() throws Exception {
    try (Wal wal = Wal.open(dir, 200, Wal.DEFAULT_OPENER, metrics, "t")) {
      for (int i = 1; i <= 20; i++) {
        wal.append(batch(i, i * 100L));
      }
      wal.sync();
    }
    assertThat(Wal.segments(dir).size()).isGreaterThan(5);
    List<String> events = replay(false);
    assertThat(events).hasSize(60);
    assertThat(events.get(0)).isEqualTo("s 1 m{i=\"1\"}");
    assertThat(events.get(1)).isEqualTo("x 1 100 1.5");
    assertThat(events.get(59)).isEqualTo("x 20 2001 -2.0");
  }

  @Test
  void eachOpenStartsANewSegment() throws Exception {
    Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t").close();
    Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t").close();
    assertThat(Wal.segments(dir)).containsExactly(0, 1);
  }

  private void writeThreeBatches() throws IOException {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      wal.append(batch(1, 100));
      wal.append(batch(2, 200));
      wal.append(batch(3, 300));
    }
  }

  @Test
  void tornLastRecordIsTruncatedAndEverythingBeforeKept() throws Exception {
    writeThreeBatches();
    Path seg = lastSegment();
    long size = Files.size(seg);
    Corrupt.truncate(seg, size - 10); // the last samples record cut in half
    List<String> events = replay(false);
    assertThat(events).containsExactly("s 1 m{i=\"1\"}", "x 1 100 1.5", "x 1 101 -2.0",
        "s 2 m{i=\"2\"}", "x 2 200 1.5", "x 2 201 -2.0", "s 3 m{i=\"3\"}");
    assertThat(metrics.tailRepairs.count()).isEqualTo(1);
    assertThat(Files.size(seg)).as("tail truncated on disk").isLessThan(size - 10);
    assertThat(replay(false)).as("second replay finds a clean WAL").hasSize(7);
    assertThat(metrics.tailRepairs.count()).isEqualTo(1);
  }

  @Test
  void flippedByteInLastRecordIsTruncated() throws Exception {
    writeThreeBatches();
    Path seg = lastSegment();
    Corrupt.flipByte(seg, Files.size(seg) - 3);
    assertThat(replay(false)).hasSize(7).last().isEqualTo("s 3 m{i=\"3\"}");
    assertThat(metrics.tailRepairs.count()).isEqualTo(1);
  }

  @Test
  void corruptionInTheMiddleStopsReplayWithAClearErrorUnlessRepairIsSet() throws Exception {
    writeThreeBatches();
    Path seg = lastSegment();
    Corrupt.flipByte(seg, 30); // inside the first records; valid records follow
    long sizeBefore = Files.size(seg);
    assertThatThrownBy(() -> replay(false))
        .isInstanceOf(WalCorruptionException.class)
        .hasMessageContaining("corrupt in the middle")
        .hasMessageContaining("--blocks-storage.tsdb.wal-repair=true");
    assertThat(Files.size(seg)).as("nothing truncated without the flag").isEqualTo(sizeBefore);
    List<String> repaired = replay(true);
    assertThat(repaired.size()).isLessThan(9);
    assertThat(metrics.corruptionRepairs.count()).isEqualTo(1);
    assertThat(replay(false)).isEqualTo(repaired);
  }

  @Test
  void corruptionInAnEarlierSegmentIsTheMiddle() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      wal.append(batch(1, 100));
      wal.roll();
      wal.append(batch(2, 200));
    }
    Path first = Wal.segmentPath(dir, 0);
    Corrupt.flipByte(first, Files.size(first) - 2);
    assertThatThrownBy(() -> replay(false)).isInstanceOf(WalCorruptionException.class)
        .hasMessageContaining(first.toString());
  }

  @Test
  void failedWriteLeavesNothingBehindAndTheWalRecoversWhenSpaceReturns() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    try (Wal wal = Wal.open(dir, 1 << 20, faults::open, metrics, "t")) {
      wal.append(batch(1, 100));
      long sizeBefore = Files.size(lastSegment());
      faults.diskFull.set(true);
      assertThatThrownBy(() -> wal.append(batch(2, 200)))
          .isInstanceOf(ServerErrorException.class).hasMessageContaining("No space left on device");
      assertThat(Files.size(lastSegment())).as("half-written record rolled back").isEqualTo(sizeBefore);
      faults.diskFull.set(false);
      wal.append(batch(3, 300));
      wal.sync();
    }
    assertThat(replay(false)).extracting(e -> e.split(" ")[1]).containsOnly("1", "3");
    assertThat(metrics.tailRepairs.count()).isZero();
    assertThat(metrics.writesFailed.count()).isEqualTo(1);
  }

  @Test
  void failedFsyncMakesTheWalRefuseWritesUntilRestart() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    Wal wal = Wal.open(dir, 1 << 20, faults::open, metrics, "t");
    long lsn = wal.append(batch(1, 100));
    faults.fsyncFails.set(true);
    assertThatThrownBy(() -> wal.awaitDurable(lsn)).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("fsync");
    faults.fsyncFails.set(false);
    assertThat(wal.failure()).contains("fsync");
    assertThatThrownBy(() -> wal.append(batch(2, 200))).isInstanceOf(ServerErrorException.class)
        .hasMessageContaining("restart");
    assertThatThrownBy(wal::sync).as("sticky").isInstanceOf(ServerErrorException.class);
    wal.close();
  }

  @Test
  void concurrentWaitersShareFsyncs() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    int threads = 8;
    int perThread = 200;
    try (Wal wal = Wal.open(dir, 64 << 20, faults::open, metrics, "t")) {
      Object appendLock = new Object(); // appends come from under the head's lock in production
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<?>> fs = new ArrayList<>();
      for (int th = 0; th < threads; th++) {
        int base = th * perThread;
        fs.add(pool.submit(() -> {
          for (int i = 0; i < perThread; i++) {
            long lsn;
            synchronized (appendLock) {
              lsn = wal.append(batch(base + i + 1, i));
            }
            wal.awaitDurable(lsn);
          }
          return null;
        }));
      }
      for (Future<?> f : fs) {
        f.get();
      }
      pool.shutdown();
    }
    assertThat(replay(false)).hasSize(threads * perThread * 3);
    // Every append waited for an fsync covering it; group commit shares them. This is not a speed
    // assertion: it only checks that waiters were actually batched at least once.
    assertThat(faults.forces.get()).isLessThan(threads * perThread);
  }

  @Test
  void failedFsyncDuringARollIsStickyAndALaterSyncRefuses() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    try (Wal wal = Wal.open(dir, 1 << 20, faults::open, metrics, "t")) {
      wal.append(batch(1, 100));
      faults.fsyncFails.set(true);
      assertThatThrownBy(wal::roll).isInstanceOf(IOException.class);
      faults.fsyncFails.set(false); // a retried fsync would "succeed" on pages the kernel dropped
      assertThatThrownBy(wal::sync).isInstanceOf(ServerErrorException.class)
          .hasMessageContaining("rolling segment 0").hasMessageContaining("Input/output error");
      assertThatThrownBy(() -> wal.append(batch(2, 200))).isInstanceOf(ServerErrorException.class)
          .hasMessageContaining("refuses writes");
      assertThat(wal.failure()).contains("rolling segment 0");
      assertThat(metrics.fsyncsFailed.count()).isEqualTo(1);
    }
  }

  @Test
  void failedFsyncOfARollInsideAnAppendIsSticky() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    long segment = batch(1, 100).length() * 2L + 20; // two framed batches fit (+6 each), the third rolls
    try (Wal wal = Wal.open(dir, segment, faults::open, metrics, "t")) {
      wal.append(batch(1, 100));
      long lsn = wal.append(batch(2, 200));
      assertThat(wal.currentSegment()).isZero();
      faults.fsyncFails.set(true);
      assertThatThrownBy(() -> wal.append(batch(3, 300))).isInstanceOf(ServerErrorException.class);
      faults.fsyncFails.set(false);
      assertThat(wal.failure()).as("the roll's fsync failed").contains("rolling segment 0");
      assertThatThrownBy(() -> wal.awaitDurable(lsn)).isInstanceOf(ServerErrorException.class);
      assertThatThrownBy(() -> wal.append(batch(4, 400))).isInstanceOf(ServerErrorException.class);
    }
  }

  @Test
  void failedFsyncAtCloseMarksTheWalFailed() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    Wal wal = Wal.open(dir, 1 << 20, faults::open, metrics, "t");
    wal.append(batch(1, 100));
    faults.fsyncFails.set(true);
    assertThatThrownBy(wal::close).isInstanceOf(IOException.class);
    assertThat(wal.failure()).contains("at close");
    assertThat(metrics.fsyncsFailed.count()).isEqualTo(1);
  }

  @Test
  void syncOnAnInterruptedThreadStillFsyncsAndKeepsTheWalUsable() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      wal.append(batch(1, 100));
      Thread.currentThread().interrupt();
      try {
        wal.sync();
        wal.append(batch(2, 200));
        assertThat(Thread.currentThread().isInterrupted()).as("interrupt flag restored").isTrue();
      } finally {
        Thread.interrupted();
      }
      wal.sync();
      assertThat(wal.failure()).isNull();
    }
    assertThat(replay(false)).extracting(e -> e.split(" ")[1]).containsOnly("1", "2");
  }

  @Test
  void fsyncCutShortByAnInterruptIsNotDurableAndIsSticky() throws Exception {
    FaultyChannel.Faults faults = new FaultyChannel.Faults();
    Wal wal = Wal.open(dir, 1 << 20, faults::open, metrics, "t");
    try {
      long lsn = wal.append(batch(1, 100));
      faults.interruptDuringForce.set(true);
      try {
        assertThatThrownBy(() -> wal.awaitDurable(lsn)).isInstanceOf(ServerErrorException.class)
            .hasMessageContaining("interrupted");
      } finally {
        Thread.interrupted();
      }
      assertThat(wal.failure()).contains("interrupted");
      assertThatThrownBy(wal::sync).isInstanceOf(ServerErrorException.class);
      assertThatThrownBy(() -> wal.append(batch(2, 200))).isInstanceOf(ServerErrorException.class);
    } finally {
      wal.close();
    }
  }

  @Test
  void defaultSegmentChannelIgnoresInterrupts() throws Exception {
    Path seg = dir.resolve("seg");
    java.nio.channels.FileChannel ch = Wal.DEFAULT_OPENER.open(seg, java.nio.file.StandardOpenOption.CREATE_NEW,
        java.nio.file.StandardOpenOption.WRITE);
    try {
      Thread.currentThread().interrupt(); // e.g. a request executor or shard thread being stopped
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}));
      ch.force(false);
      ch.truncate(2);
      assertThat(Thread.interrupted()).as("the interrupt is left for the caller").isTrue();
      assertThat(ch.isOpen()).isTrue();
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {4}));
    } finally {
      Thread.interrupted();
      ch.close();
    }
    assertThat(Files.readAllBytes(seg)).containsExactly(1, 2, 4);
    assertThatThrownBy(() -> Wal.DEFAULT_OPENER.open(seg, java.nio.file.StandardOpenOption.CREATE_NEW,
        java.nio.file.StandardOpenOption.WRITE)).isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
  }

  @Test
  void repairOfACorruptionReportsWhatWasDroppedAndTheFirstSourceOffset() throws Exception {
    try (Wal wal = Wal.open(dir, 1 << 20, Wal.DEFAULT_OPENER, metrics, "t")) {
      for (int seg = 0; seg < 3; seg++) {
        for (int k = 0; k < 3; k++) {
          int n = seg * 3 + k;
          ByteSink b = new ByteSink(64);
          WalRecords.source(b, 500 + n);
          WalRecords.series(b, new int[] {n + 1}, new Labels[] {Labels.of("__name__", "m", "i", "" + n)}, 1);
          WalRecords.samples(b, new int[] {n + 1}, new long[] {n}, new double[] {n}, 1);
          wal.append(b);
        }
        wal.roll();
      }
    }
    Path first = Wal.segmentPath(dir, 0);
    long third = Files.size(first) * 2 / 3; // inside commit 2 (its SOURCE 502, series or samples)
    Corrupt.flipByte(first, third + 12);
    Recorder r = new Recorder();
    WalReader.Result res = WalReader.replay(dir, r, true, metrics, "t");
    assertThat(res.repairedCorruption()).isTrue();
    assertThat(res.damagedSegment()).isEqualTo(first);
    assertThat(res.droppedSegments()).isEqualTo(3); // segments 1, 2 and the empty 3
    assertThat(res.droppedRecords()).isGreaterThanOrEqualTo(6 * 3); // commits 3..8, three records each
    assertThat(res.firstDroppedSourceOffset()).isBetween(501L, 502L);
    assertThat(r.events).contains("s 1 m{i=\"0\"}", "x 2 1 1.0").doesNotContain("x 4 3 3.0");
    assertThat(metrics.corruptions.count()).isEqualTo(1);
    assertThat(metrics.droppedRecords.count()).isEqualTo(res.droppedRecords());
    assertThat(Wal.segments(dir)).containsExactly(0);
  }
}
