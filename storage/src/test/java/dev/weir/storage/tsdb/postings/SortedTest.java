package dev.weir.storage.tsdb.postings;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SortedTest {
  @Test
  void setOperationsAgreeWithTreeSet() {
    Random r = new Random(7);
    for (int round = 0; round < 300; round++) {
      List<int[]> lists = new ArrayList<>();
      List<TreeSet<Integer>> sets = new ArrayList<>();
      int k = 1 + r.nextInt(30);
      for (int i = 0; i < k; i++) {
        TreeSet<Integer> s = new TreeSet<>();
        int n = r.nextInt(50);
        for (int j = 0; j < n; j++) {
          s.add(1 + r.nextInt(200));
        }
        sets.add(s);
        lists.add(s.stream().mapToInt(Integer::intValue).toArray());
      }
      TreeSet<Integer> union = new TreeSet<>();
      sets.forEach(union::addAll);
      assertThat(Sorted.union(lists)).containsExactly(toArray(union));
      TreeSet<Integer> inter = new TreeSet<>(sets.get(0));
      inter.retainAll(sets.get(k - 1));
      assertThat(Sorted.intersect(lists.get(0), lists.get(k - 1))).containsExactly(toArray(inter));
      TreeSet<Integer> diff = new TreeSet<>(sets.get(0));
      diff.removeAll(sets.get(k - 1));
      assertThat(Sorted.subtract(lists.get(0), lists.get(k - 1))).containsExactly(toArray(diff));
    }
  }

  private static int[] toArray(TreeSet<Integer> s) {
    return s.stream().mapToInt(Integer::intValue).toArray();
  }
}
