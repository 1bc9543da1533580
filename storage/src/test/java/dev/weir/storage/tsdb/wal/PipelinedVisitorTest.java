package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The replay pipeline: same calls, same order, on another thread; failures come back to the reader. */
class PipelinedVisitorTest {
  /** Records every call as text, and the threads that made them. */
  static final class Recorder implements WalRecords.Visitor {
    final List<String> calls = new ArrayList<>();
    final java.util.Set<String> threads = new java.util.HashSet<>();
    int failAt = -1;

    private void call(String c) {
      threads.add(Thread.currentThread().getName());
      if (calls.size() == failAt) {
        throw new IllegalStateException("target failed at call " + failAt);
      }
      calls.add(c);
    }

    @Override
    public void series(int ref, Labels labels) {
      call("series " + ref + " " + labels);
    }

    @Override
    public void sample(int ref, long t, double v) {
      call("sample " + ref + " " + t + " " + v);
    }

    @Override
    public void source(long offset) {
      call("source " + offset);
    }

    @Override
    public void exemplar(int ref, long t, double v, Labels labels) {
      call("exemplar " + ref + " " + t + " " + v + " " + labels);
    }
  }

  /** More calls than fit in the batches in flight, of every kind, interleaved. */
  static void feed(WalRecords.Visitor v, int n) {
    for (int i = 0; i < n; i++) {
      switch (i % 4) {
        case 0 -> v.series(i, Labels.of("s", String.valueOf(i)));
        case 1 -> v.sample(i - 1, i, i * 0.5);
        case 2 -> v.source(i);
        default -> v.exemplar(i - 3, i, -i, Labels.of("trace_id", "t" + i));
      }
    }
  }

  @Test
  void everyCallArrivesInOrderOnTheApplyingThread() {
    int n = PipelinedVisitor.BATCH * (PipelinedVisitor.IN_FLIGHT + 3) + 17;
    Recorder direct = new Recorder();
    feed(direct, n);
    Recorder target = new Recorder();
    try (PipelinedVisitor p = new PipelinedVisitor(target, "replay-test")) {
      feed(p, n);
      p.finish();
    }
    assertThat(target.calls).isEqualTo(direct.calls);
    assertThat(target.threads).containsExactly("replay-test");
  }

  @Test
  void seriesLabelsAreMappedOnTheReadingThreadBeforeTheHandOff() {
    List<String> mappedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Labels> applied = new ArrayList<>();
    WalRecords.Visitor target = new WalRecords.Visitor() {
      @Override
      public void series(int ref, Labels labels) {
        applied.add(labels);
      }

      @Override
      public void sample(int ref, long t, double v) {}
    };
    try (PipelinedVisitor p = new PipelinedVisitor(target, "replay-test", l -> {
      mappedOn.add(Thread.currentThread().getName());
      return Labels.withWireEncoding(l);
    })) {
      p.series(1, Labels.of("__name__", "up", "job", "a"));
      p.series(2, Labels.of("__name__", "up", "job", "b"));
      p.finish();
    }
    assertThat(mappedOn).containsOnly(Thread.currentThread().getName()).hasSize(2);
    assertThat(applied).containsExactly(Labels.of("__name__", "up", "job", "a"), Labels.of("__name__", "up", "job", "b"));
    assertThat(applied).allSatisfy(l -> assertThat(l.wireEncoding()).isNotNull()
        .isEqualTo(Labels.withWireEncoding(Labels.of(l.pairsUnsafe().clone())).wireEncoding()));
  }

  @Test
  void aFailureOfTheTargetIsThrownToTheReaderAndTheRestIsNotApplied() {
    Recorder target = new Recorder();
    target.failAt = 10;
    PipelinedVisitor p = new PipelinedVisitor(target, "replay-fail");
    assertThatThrownBy(() -> {
      feed(p, PipelinedVisitor.BATCH * (PipelinedVisitor.IN_FLIGHT + 3));
      p.finish();
    }).isInstanceOf(IllegalStateException.class).hasMessage("target failed at call 10");
    p.close();
    assertThat(target.calls).hasSize(10);
  }

  @Test
  void closingWithoutFinishingEndsTheApplyingThread() throws Exception {
    Recorder target = new Recorder();
    PipelinedVisitor p = new PipelinedVisitor(target, "replay-abandoned");
    feed(p, 100); // still in the reader's batch
    p.close();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (threadAlive("replay-abandoned") && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(threadAlive("replay-abandoned")).isFalse();
    assertThat(target.calls).isEmpty();
  }

  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }
}
