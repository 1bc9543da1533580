package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LabelsSortTest {
  /** The order sortPairs promises: by name (UTF-8 byte order), equal names in their first order. */
  private static String[] reference(String[] pairs) {
    List<String[]> list = new ArrayList<>();
    for (int i = 0; i < pairs.length; i += 2) {
      list.add(new String[] {pairs[i], pairs[i + 1]});
    }
    list.sort(Comparator.comparing((String[] p) -> p[0], Utf8Order::compare)); // List.sort is stable
    String[] out = new String[pairs.length];
    for (int i = 0; i < list.size(); i++) {
      out[2 * i] = list.get(i)[0];
      out[2 * i + 1] = list.get(i)[1];
    }
    return out;
  }

  @Test
  void sortsByNameStablyAtEverySizeAndSaysWhetherItWasSorted() {
    Random rnd = new Random(11);
    String[] names = {"__name__", "a", "b", "job", "zone", "é", "水", "Z", "_"};
    int large = 0;
    for (int round = 0; round < 3_000; round++) {
      int n = rnd.nextInt(10) == 0 ? Labels.INSERTION_SORT_MAX + 1 + rnd.nextInt(300) : rnd.nextInt(12);
      String[] pairs = new String[2 * n];
      for (int i = 0; i < n; i++) {
        pairs[2 * i] = rnd.nextInt(4) == 0 ? names[rnd.nextInt(names.length)] : "n" + rnd.nextInt(2 * n + 1);
        pairs[2 * i + 1] = "v" + i; // which pair came first, for stability
      }
      if (rnd.nextInt(3) == 0) {
        pairs = reference(pairs); // already sorted input, duplicates included
      }
      String[] want = reference(pairs);
      boolean wasSorted = java.util.Arrays.equals(want, pairs);
      assertThat(Labels.sortPairs(pairs)).as("sorted flag, %d pairs", n).isEqualTo(wasSorted);
      assertThat(pairs).isEqualTo(want);
      if (n > Labels.INSERTION_SORT_MAX && !wasSorted) {
        large++;
      }
    }
    assertThat(large).as("large unsorted inputs exercised").isGreaterThan(100);
  }

  @Test
  void aLongReverseOrderedLabelSetSorts() {
    int n = 20_000;
    String[] pairs = new String[2 * n];
    for (int i = 0; i < n; i++) {
      pairs[2 * i] = String.format("l%06d", n - i);
      pairs[2 * i + 1] = "v";
    }
    assertThat(Labels.sortPairs(pairs)).isFalse();
    for (int i = 1; i < n; i++) {
      assertThat(pairs[2 * i - 2].compareTo(pairs[2 * i])).isNegative();
    }
  }
}
