package dev.weir.storage.tsdb.head;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * An appender that reserves its batch borrows its thread's arrays until its commit or release:
 * samples of two appenders of one thread never mix, an appender outgrowing them commits every
 * sample, and the arrays keep no series once given back.
 */
class AppenderTest {
  private final AtomicLong wall = new AtomicLong(1_000);
  private final TenantHead head = new TenantHead("t", new HeadConfig(7_200_000L, 120), HeadOptions.inMemory(wall::get));

  private double[] values(String name) {
    List<SeriesChunks> found = head.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("__name__", name)));
    assertThat(found).hasSize(1);
    return found.get(0).samples(Long.MIN_VALUE, Long.MAX_VALUE).values();
  }

  @Test
  void twoAppendersOfOneThreadKeepTheirOwnSamples() {
    Appender a = head.appender();
    Appender b = head.appender();
    a.reserve(100);
    b.reserve(100);
    assertThat(a.holdsThreadArrays()).isTrue();
    assertThat(b.holdsThreadArrays()).as("lent to a already: b makes its own").isFalse();
    MemSeries sa = a.series(Labels.of("__name__", "a"));
    MemSeries sb = b.series(Labels.of("__name__", "b"));
    for (int i = 0; i < 100; i++) {
      a.add(sa, i, i);
      b.add(sb, i, -i);
    }
    assertThat(b.commit(false).appended()).isEqualTo(100);
    assertThat(a.commit(false).appended()).isEqualTo(100);
    assertThat(a.holdsThreadArrays()).as("given back by the commit").isFalse();
    assertThat(values("a")[99]).isEqualTo(99.0);
    assertThat(values("b")[99]).isEqualTo(-99.0);
    assertThat(Appender.threadArraysSeriesHeld()).isZero();

    Appender c = head.appender();
    c.reserve(10);
    assertThat(c.holdsThreadArrays()).as("free again").isTrue();
    c.release();
  }

  @Test
  void anAppenderThatOutgrowsTheArraysCommitsEverySampleAndGivesThemBack() {
    Appender a = head.appender();
    a.reserve(10);
    assertThat(a.holdsThreadArrays()).isTrue();
    MemSeries s = a.series(Labels.of("__name__", "grown"));
    for (int i = 0; i < 5_000; i++) {
      a.add(s, i, i);
    }
    assertThat(a.commit(false).appended()).isEqualTo(5_000);
    assertThat(values("grown")).hasSize(5_000);
    assertThat(Appender.threadArraysSeriesHeld()).isZero();
    Appender next = head.appender();
    next.reserve(20);
    assertThat(next.holdsThreadArrays()).isTrue();
    next.release();
  }

  @Test
  void aReleaseWithoutCommitForgetsTheSamplesAndGivesTheArraysBack() {
    Appender a = head.appender();
    a.reserve(50);
    MemSeries s = a.series(Labels.of("__name__", "dropped"));
    for (int i = 0; i < 50; i++) {
      a.add(s, i, i);
    }
    a.release();
    assertThat(a.size()).isZero();
    assertThat(Appender.threadArraysSeriesHeld()).isZero();
    assertThat(a.commit(false).appended()).as("nothing left to commit").isZero();
    Appender b = head.appender();
    b.reserve(50);
    assertThat(b.holdsThreadArrays()).isTrue();
    b.add(s, 100, 1);
    assertThat(b.commit(false).appended()).isEqualTo(1);
    assertThat(values("dropped")).containsExactly(1.0);
  }

  /**
   * Histograms in a batch on borrowed arrays: the histogram array is sized by the batch, and
   * grows when more samples follow than were reserved (a commit reads it at every sample).
   */
  @Test
  void histogramsAmongMoreSamplesThanReservedAreAllCommitted() {
    Appender big = head.appender();
    big.reserve(10_000); // the thread's arrays grow to 10,000 and stay
    big.release();
    Appender a = head.appender();
    a.reserve(2);
    assertThat(a.holdsThreadArrays()).isTrue();
    MemSeries f = a.series(Labels.of("__name__", "f"));
    MemSeries h = a.series(Labels.of("__name__", "h"));
    a.add(f, 0, 0);
    a.addHistogram(h, 0, TenantHeadHistogramTest.ints(1));
    for (int i = 1; i <= 300; i++) {
      a.add(f, i, i);
      if (i % 100 == 0) {
        a.addHistogram(h, i, TenantHeadHistogramTest.ints(i + 1));
      }
    }
    assertThat(a.commit(false).appended()).isEqualTo(305);
    assertThat(values("f")).hasSize(301);
    List<SeriesChunks> hs = head.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "h")));
    assertThat(hs.get(0).histograms(Long.MIN_VALUE, Long.MAX_VALUE).size()).isEqualTo(4);
  }

  @Test
  void aBatchLargerThanTheArraysKeptIsItsOwn() {
    Appender a = head.appender();
    a.reserve(Appender.BATCH_ARRAYS_KEPT + 1);
    assertThat(a.holdsThreadArrays()).isFalse();
    a.release();
  }
}
