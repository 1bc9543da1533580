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

/**
 * Tables of their own for the rules (the process' dictionary is shared by every test in the JVM and
 * never forgets); names of this test's own where the process' is used.
 */
class LabelValuesTest {
  private static int name(String n) {
    byte[] b = n.getBytes(StandardCharsets.UTF_8);
    int id = LabelNames.id(b, 0, b.length);
    assertThat(id).as("the name dictionary takes " + n).isNotNegative();
    return id;
  }

  /** Looks {@code value} up in {@code t}, from the middle of a larger array as a request's bytes are. */
  private static int id(LabelValues.Table t, int name, String value) {
    byte[] b = value.getBytes(StandardCharsets.UTF_8);
    byte[] framed = new byte[b.length + 5];
    System.arraycopy(b, 0, framed, 3, b.length);
    return t.id(name, framed, 3, b.length);
  }

  @Test
  void aValueGetsOneNumberPerNameAndKeepsIt() {
    LabelValues.Table t = new LabelValues.Table(1024, 1024);
    int job = name("lv_test_job");
    int other = name("lv_test_other");
    int api = id(t, job, "api-server");
    assertThat(api).isNotNegative();
    assertThat(id(t, job, "api-server")).isEqualTo(api);
    assertThat(t.bytes(api)).asString(StandardCharsets.UTF_8).isEqualTo("api-server");
    assertThat(id(t, other, "api-server")).as("the same text under another name").isNotNegative().isNotEqualTo(api);
    assertThat(id(t, job, "")).as("the empty value").isNotNegative().isEqualTo(id(t, job, ""));
    assertThat(t.bytes(id(t, job, ""))).isEmpty();
  }

  @Test
  void longValuesAndNamesOutsideTheNameDictionaryStayInFull() {
    LabelValues.Table t = new LabelValues.Table(1024, 1024);
    int job = name("lv_test_long");
    assertThat(id(t, job, "x".repeat(LabelValues.MAX_VALUE_BYTES))).isNotNegative();
    assertThat(id(t, job, "y".repeat(LabelValues.MAX_VALUE_BYTES + 1))).isEqualTo(-1);
    assertThat(id(t, -1, "api")).as("a name stored in full").isEqualTo(-1);
  }

  @Test
  void aNameTakesAtMostItsShareAndWhatStaysOutStaysOut() {
    LabelValues.Table t = new LabelValues.Table(1 << 16, 3000);
    int pod = name("lv_test_pod");
    int[] ids = new int[3000];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = id(t, pod, "pod-" + i);
      assertThat(ids[i]).isEqualTo(i);
    }
    assertThat(id(t, pod, "pod-late")).as("past the share").isEqualTo(-1);
    assertThat(id(t, pod, "pod-late")).as("and always").isEqualTo(-1);
    assertThat(id(t, pod, "pod-17")).as("those in keep their numbers").isEqualTo(ids[17]);
    assertThat(id(t, name("lv_test_pod_other"), "pod-late")).as("another name has its own share").isEqualTo(3000);
    // The tables grew from 1,024 entries and 2,048 slots on the way: every value is still found.
    for (int i = 0; i < ids.length; i++) {
      assertThat(id(t, pod, "pod-" + i)).isEqualTo(ids[i]);
      assertThat(t.bytes(ids[i])).asString(StandardCharsets.UTF_8).isEqualTo("pod-" + i);
    }
    assertThat(t.size()).isEqualTo(3001);
  }

  @Test
  void aFullDictionaryStillFindsWhatItHolds() {
    LabelValues.Table t = new LabelValues.Table(5, 4096);
    int job = name("lv_test_full");
    for (int i = 0; i < 5; i++) {
      assertThat(id(t, job, "job-" + i)).isEqualTo(i);
    }
    assertThat(id(t, job, "job-5")).isEqualTo(-1);
    assertThat(id(t, name("lv_test_full_other"), "job-0")).as("no room for another name either").isEqualTo(-1);
    for (int i = 0; i < 5; i++) {
      assertThat(id(t, job, "job-" + i)).as("found without the lock once full").isEqualTo(i);
    }
    assertThat(t.bytesEstimate()).isEqualTo(48L + 4 * 2048 + 4 * 1024 + 4 * 1024 + 5 * 24);
  }

  @Test
  void aNumberNeverHandedOutIsRefused() {
    LabelValues.Table t = new LabelValues.Table(16, 16);
    id(t, name("lv_test_refused"), "x");
    assertThat(t.bytes(0)).asString(StandardCharsets.UTF_8).isEqualTo("x");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.bytes(1))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("never handed out");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.bytes(-3))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("never handed out");
  }

  @Test
  void theProcessReportsTheDictionariesSizes() {
    byte[] one = "one".getBytes(StandardCharsets.UTF_8);
    LabelValues.id(name("lv_test_metrics"), one, 0, one.length);
    io.micrometer.core.instrument.simple.SimpleMeterRegistry r = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    new dev.weir.storage.tsdb.TsdbMetrics(r);
    double values = r.get("weir.tsdb.label.dictionary.entries").tag("kind", "values").gauge().value();
    assertThat(values).isGreaterThanOrEqualTo(1).isLessThanOrEqualTo(LabelValues.size());
    assertThat(r.get("weir.tsdb.label.dictionary.entries").tag("kind", "names").gauge().value())
        .isGreaterThanOrEqualTo(1).isLessThanOrEqualTo(LabelNames.size());
    assertThat(r.get("weir.tsdb.label.value.dictionary.bytes").gauge().value())
        .isGreaterThanOrEqualTo(16 * values);
  }

  /** Values whose String hashes are equal ("Aa" and "BB") are distinct entries. */
  @Test
  void valuesWithEqualStringHashesAreDistinct() {
    LabelValues.Table t = new LabelValues.Table(1024, 1024);
    int n = name("lv_test_collide");
    int a = id(t, n, "AaAa");
    int b = id(t, n, "BBBB");
    int c = id(t, n, "AaBB");
    assertThat(List.of(a, b, c)).doesNotHaveDuplicates().allMatch(i -> i >= 0);
    assertThat(id(t, n, "BBBB")).isEqualTo(b);
  }

  /**
   * Threads adding the same values at once agree on each value's number, also for the values that
   * fill the table (a bound of 900 for 1,000 values: the last ones race with the bound).
   */
  @Test
  void threadsAddingTheSameValuesAgreeOnTheirNumbers() throws Exception {
    for (int round = 0; round < 20; round++) {
      LabelValues.Table t = new LabelValues.Table(900, 4096);
      int n = name("lv_test_threads");
      int threads = 4;
      int values = 1_000;
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<int[]>> results = new ArrayList<>();
        for (int th = 0; th < threads; th++) {
          int offset = th * 251 + round;
          results.add(pool.submit(() -> {
            start.await();
            int[] got = new int[values];
            for (int i = 0; i < values; i++) {
              int v = (i + offset) % values;
              got[v] = id(t, n, "value-" + v);
            }
            return got;
          }));
        }
        start.countDown();
        int[] first = results.get(0).get();
        for (Future<int[]> f : results) {
          assertThat(f.get()).containsExactly(first);
        }
        assertThat(java.util.Arrays.stream(first).filter(i -> i >= 0).distinct().count()).isEqualTo(900);
        for (int v = 0; v < values; v++) {
          if (first[v] >= 0) {
            assertThat(t.bytes(first[v])).asString(StandardCharsets.UTF_8).isEqualTo("value-" + v);
          }
          assertThat(id(t, n, "value-" + v)).as("the same answer afterwards").isEqualTo(first[v]);
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }
}
