package dev.weir.storage.bucketstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.errors.ClientErrorException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeReadsTest {
  /** A 1000-byte file whose byte i is i % 251, recording each read as [offset, length]. */
  final byte[] file = new byte[1000];
  final List<long[]> reads = new ArrayList<>();
  final RangeReads.FileReader reader = (offset, length) -> {
    reads.add(new long[] {offset, length});
    int from = (int) Math.min(offset, file.length);
    return Arrays.copyOfRange(file, from, (int) Math.min(file.length, offset + length));
  };

  RangeReadsTest() {
    for (int i = 0; i < file.length; i++) {
      file[i] = (byte) (i % 251);
    }
  }

  static RangeReads.Range r(long start, long end) {
    return new RangeReads.Range(start, end);
  }

  @Test
  void mergesRangesWithinTheGapAndKeepsTheCallersOrder() throws Exception {
    ByteBuffer[] got = RangeReads.read(reader, List.of(r(500, 510), r(100, 110), r(115, 120), r(300, 310)), 10, 1 << 20,
        QueryBudget.UNLIMITED);
    assertThat(reads).extracting(x -> x[0] + "+" + x[1]).containsExactly("100+20", "300+10", "500+10");
    assertThat(got[0].get(0)).isEqualTo(file[500]);
    assertThat(got[1].get(0)).isEqualTo(file[100]);
    assertThat(got[1].remaining()).as("sees the merged neighbour").isEqualTo(20);
    assertThat(got[2].get(0)).isEqualTo(file[115]);
    assertThat(got[3].get(0)).isEqualTo(file[300]);
  }

  @Test
  void stopsMergingAtTheMaximumReadAndShortensAtTheFilesEnd() throws Exception {
    ByteBuffer[] got = RangeReads.read(reader, List.of(r(0, 100), r(100, 200), r(990, 1100)), 1000, 150,
        QueryBudget.UNLIMITED);
    assertThat(reads).extracting(x -> x[0] + "+" + x[1]).containsExactly("0+100", "100+100", "990+110");
    assertThat(got[2].remaining()).isEqualTo(10);
  }

  @Test
  void reservesEachReadInTheBudgetBeforeMakingIt() {
    QueryBudget budget = new QueryBudget(150);
    assertThatThrownBy(() -> RangeReads.read(reader, List.of(r(0, 100), r(500, 600)), 0, 1 << 20, budget))
        .isInstanceOf(ClientErrorException.class);
    assertThat(reads).hasSize(1);
  }
}
