package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.chunk.XorIterator;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A series' float head chunk (its own fields) and what its sample data costs in the head's estimate. */
class MemSeriesTest {
  private static final long RANGE = 7_200_000L;

  @Test
  void chunkBytesCountEachClosedChunkWithItsHeaderAndTheArraysThatIndexThem() {
    MemSeries s = new MemSeries(Labels.of("__name__", "m"), 1);
    for (int i = 0; i < 30; i++) {
      s.append(i * 15_000L, i * 1.25 + 0.1, 120, RANGE, 0);
    }
    long headOnly = s.chunkBytes();
    assertThat(headOnly).as("the head chunk's buffer").isPositive();

    s.append(RANGE, 7.5, 120, RANGE, 0); // the next range: the head chunk is closed, a new one started
    List<ChunkData> chunks = s.chunks(Long.MIN_VALUE, Long.MAX_VALUE);
    assertThat(chunks).hasSize(2);
    int closedLength = chunks.get(0).bytes().length;
    long newHead = s.chunkBytes() - MemSeries.arrayBytes(closedLength) - MemSeries.arrayBytes(4L * 4)
        - MemSeries.arrayBytes(16L * 4);
    // The closed chunk (header, 8-byte aligned) and two index arrays of 4 slots (references; min
    // and max times) are counted beside the new head chunk's buffer, which is all that remains.
    assertThat(newHead).as("the new head chunk's buffer").isPositive().isLessThan(headOnly);
    assertThat(MemSeries.arrayBytes(0)).isEqualTo(16);
    assertThat(MemSeries.arrayBytes(1)).isEqualTo(24);
    assertThat(MemSeries.arrayBytes(8)).isEqualTo(24);
    assertThat(MemSeries.arrayBytes(9)).isEqualTo(32);
  }

  /**
   * The float head chunk lives in the series' own fields: every chunk it cuts (by sample count, by
   * range, before a histogram) decodes to exactly what was appended, the newest sample survives a
   * histogram and the truncation of every chunk, and a dropped head chunk leaves no buffer.
   */
  @Test
  void theFloatHeadChunkCutsDecodesAndIsReleasedWithTheNewestSampleKept() {
    MemSeries s = new MemSeries(Labels.of("__name__", "m"), 1);
    List<long[]> appended = new ArrayList<>(); // time, value bits
    for (int i = 0; i < 250; i++) { // 120 + 120 + 10 samples: two cuts by count
      double v = i % 7 == 0 ? 1.0 : Math.sin(i) * 1000;
      s.append(i * 15_000L + (i % 3), v, 120, RANGE, 0);
      appended.add(new long[] {i * 15_000L + (i % 3), Double.doubleToRawLongBits(v)});
    }
    s.appendHistogram(250 * 15_000L, TenantHeadHistogramTest.ints(1), 120, RANGE, 0); // closes the float chunk
    assertThat(s.maxTime()).isEqualTo(250 * 15_000L);
    assertThat(s.lastValueBits()).isZero();
    s.append(251 * 15_000L, -2.5, 120, RANGE, 0); // a float after the histogram: a new float chunk
    appended.add(new long[] {251 * 15_000L, Double.doubleToRawLongBits(-2.5)});
    assertThat(s.lastValueBits()).isEqualTo(Double.doubleToRawLongBits(-2.5));

    List<ChunkData> chunks = s.chunks(Long.MIN_VALUE, Long.MAX_VALUE);
    assertThat(chunks).extracting(ChunkData::encoding)
        .containsExactly(Chunks.XOR, Chunks.XOR, Chunks.XOR, Chunks.HISTOGRAM, Chunks.XOR);
    List<long[]> decoded = new ArrayList<>();
    for (ChunkData c : chunks) {
      if (c.encoding() == Chunks.XOR) {
        XorIterator it = new XorIterator(c.bytes());
        long first = Long.MIN_VALUE;
        while (it.next()) {
          first = first == Long.MIN_VALUE ? it.timestamp() : first;
          decoded.add(new long[] {it.timestamp(), Double.doubleToRawLongBits(it.value())});
        }
        assertThat(first).isEqualTo(c.minTime());
        assertThat(decoded.get(decoded.size() - 1)[0]).isEqualTo(c.maxTime());
      }
    }
    assertThat(decoded).containsExactlyElementsOf(appended);
    assertThat(s.holds(100 * 15_000L + 1, appended.get(100)[1])).isTrue();
    assertThat(s.holds(251 * 15_000L, Double.doubleToRawLongBits(-2.5))).isTrue();
    assertThat(s.numSamples()).isEqualTo(252);

    // Truncating everything: the chunks go, the head chunk's buffer too; the newest sample stays known.
    List<ChunkData> out = new ArrayList<>();
    s.chunksBefore(Long.MAX_VALUE, out);
    assertThat(out).hasSize(5);
    assertThat(s.dropChunksBefore(Long.MAX_VALUE)).as("nothing left").isTrue();
    assertThat(s.numSamples()).isZero();
    assertThat(s.chunkBytes()).isEqualTo(MemSeries.arrayBytes(4L * 8) + MemSeries.arrayBytes(16L * 8)
        + MemSeries.arrayBytes(8) + MemSeries.RARE_BYTES); // the emptied index arrays (8 slots), encodings, histogram fields
    assertThat(s.maxTime()).isEqualTo(251 * 15_000L);
    assertThat(s.heldFrom()).isEqualTo(251 * 15_000L + 1);

    s.append(252 * 15_000L, 4.0, 120, RANGE, 0); // appends go on after the release
    assertThat(s.chunks(Long.MIN_VALUE, Long.MAX_VALUE)).singleElement()
        .satisfies(c -> assertThat(c.minTime()).isEqualTo(252 * 15_000L));
  }

  /** The last append's wall-clock time is kept in whole seconds, rounded up: never earlier than it was. */
  @Test
  void theLastAppendsWallClockTimeIsRoundedUpToTheSecond() {
    MemSeries s = new MemSeries(Labels.of("__name__", "m"), 1);
    assertThat(s.lastAppendWallMillis()).as("before any sample").isEqualTo(Long.MIN_VALUE);
    long now = 1_765_000_000_123L; // 2025-12-06
    s.append(1, 1, 120, RANGE, now);
    assertThat(s.lastAppendWallMillis()).isEqualTo(1_765_000_001_000L);
    s.append(2, 1, 120, RANGE, 1_765_000_005_000L);
    assertThat(s.lastAppendWallMillis()).as("a whole second stays").isEqualTo(1_765_000_005_000L);
    s.append(3, 1, 120, RANGE, 5_001); // test clocks near 1970 too
    assertThat(s.lastAppendWallMillis()).isEqualTo(6_000);
    s.append(4, 1, 120, RANGE, -1_500);
    assertThat(s.lastAppendWallMillis()).isEqualTo(-1_000);
    s.append(5, 1, 120, RANGE, 3_786_912_000_000L); // 2090: past an int of seconds from 2020, clamped
    assertThat(s.lastAppendWallMillis()).isEqualTo((Integer.MAX_VALUE + MemSeries.WALL_EPOCH_SECOND) * 1000);
  }

  /** A replayed sample at or before the series' newest is skipped and says so; a newer one is appended. */
  @Test
  void aReplayAppendsOnlyNewerSamples() {
    MemSeries s = new MemSeries(Labels.of("__name__", "m"), 1);
    assertThat(s.appendIfNewer(1_000, 1, 120, RANGE, 0)).isTrue();
    assertThat(s.appendIfNewer(1_000, 2, 120, RANGE, 0)).as("the same time").isFalse();
    assertThat(s.appendIfNewer(500, 3, 120, RANGE, 0)).as("older").isFalse();
    assertThat(s.appendIfNewer(2_000, 4, 120, RANGE, 0)).isTrue();
    assertThat(s.numSamples()).isEqualTo(2);
    assertThat(s.maxTime()).isEqualTo(2_000);
    assertThat(s.lastValueBits()).isEqualTo(Double.doubleToRawLongBits(4));
    synchronized (s) {
      assertThat(s.hasSamplesLocked()).isTrue();
      assertThat(s.maxTimeLocked()).isEqualTo(2_000);
      assertThat(s.lastValueBitsLocked()).isEqualTo(Double.doubleToRawLongBits(4));
      assertThat(s.lastHistogramLocked()).isNull();
    }
  }
}
