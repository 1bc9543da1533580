package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The dictionary is the process': each test takes names of its own, so other tests' values do not count. */
class LabelValuesTest {
  private static int name(String n) {
    byte[] b = n.getBytes(StandardCharsets.UTF_8);
    int id = LabelNames.id(b, 0, b.length);
    assertThat(id).as("the name dictionary takes " + n).isNotNegative();
    return id;
  }

  private static int id(int name, String value) {
    byte[] b = value.getBytes(StandardCharsets.UTF_8);
    byte[] framed = new byte[b.length + 5];
    System.arraycopy(b, 0, framed, 3, b.length);
    return LabelValues.id(name, framed, 3, b.length);
  }

  @Test
  void aValueGetsOneNumberPerNameAndKeepsIt() {
    int job = name("lv_test_job");
    int other = name("lv_test_other");
    int api = id(job, "api-server");
    assertThat(api).isNotNegative();
    assertThat(id(job, "api-server")).isEqualTo(api);
    assertThat(LabelValues.bytes(api)).asString(StandardCharsets.UTF_8).isEqualTo("api-server");
    assertThat(id(other, "api-server")).as("the same text under another name").isNotNegative().isNotEqualTo(api);
    assertThat(id(job, "")).as("the empty value").isNotNegative().isEqualTo(id(job, ""));
    assertThat(LabelValues.bytes(id(job, ""))).isEmpty();
  }

  @Test
  void longValuesAndNamesOutsideTheNameDictionaryStayInFull() {
    int job = name("lv_test_long");
    assertThat(id(job, "x".repeat(LabelValues.MAX_VALUE_BYTES))).isNotNegative();
    assertThat(id(job, "y".repeat(LabelValues.MAX_VALUE_BYTES + 1))).isEqualTo(-1);
    assertThat(id(-1, "api")).as("a name stored in full").isEqualTo(-1);
  }

  @Test
  void aNameTakesAtMostItsShareAndWhatStaysOutStaysOut() {
    int pod = name("lv_test_pod");
    int[] ids = new int[LabelValues.MAX_PER_NAME];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = id(pod, "pod-" + i);
      assertThat(ids[i]).isNotNegative();
    }
    assertThat(id(pod, "pod-late")).as("past the share").isEqualTo(-1);
    assertThat(id(pod, "pod-late")).as("and always").isEqualTo(-1);
    assertThat(id(pod, "pod-17")).as("those in keep their numbers").isEqualTo(ids[17]);
    assertThat(id(name("lv_test_pod_other"), "pod-late")).as("another name has its own share").isNotNegative();
  }

  /** Values whose String hashes are equal ("Aa" and "BB") are distinct entries. */
  @Test
  void valuesWithEqualStringHashesAreDistinct() {
    int n = name("lv_test_collide");
    int a = id(n, "AaAa");
    int b = id(n, "BBBB");
    int c = id(n, "AaBB");
    assertThat(List.of(a, b, c)).doesNotHaveDuplicates().allMatch(i -> i >= 0);
    assertThat(id(n, "BBBB")).isEqualTo(b);
  }

  @Test
  void threadsAddingTheSameValuesAgreeOnTheirNumbers() throws Exception {
    int n = name("lv_test_threads");
    int threads = 4;
    int values = 1_000;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<int[]>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int offset = t * 251;
        results.add(pool.submit(() -> {
          start.await();
          int[] got = new int[values];
          for (int i = 0; i < values; i++) {
            int v = (i + offset) % values;
            got[v] = id(n, "value-" + v);
          }
          return got;
        }));
      }
      start.countDown();
      int[] first = results.get(0).get();
      for (Future<int[]> f : results) {
        assertThat(f.get()).containsExactly(first);
      }
      assertThat(first).doesNotHaveDuplicates();
      for (int v = 0; v < values; v++) {
        assertThat(LabelValues.bytes(first[v])).asString(StandardCharsets.UTF_8).isEqualTo("value-" + v);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
