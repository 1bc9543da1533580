package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a series' sample data costs in its share of the head's memory estimate. */
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
        - 2 * MemSeries.arrayBytes(8L * 4);
    // The closed chunk (header, 8-byte aligned) and three index arrays of 4 slots (references,
    // min times, max times) are counted beside the new head chunk's buffer, which is all that remains.
    assertThat(newHead).as("the new head chunk's buffer").isPositive().isLessThan(headOnly);
    assertThat(MemSeries.arrayBytes(0)).isEqualTo(16);
    assertThat(MemSeries.arrayBytes(1)).isEqualTo(24);
    assertThat(MemSeries.arrayBytes(8)).isEqualTo(24);
    assertThat(MemSeries.arrayBytes(9)).isEqualTo(32);
  }
}
