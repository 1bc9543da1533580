package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ConcurrentFetcher} over an in-memory partition ({@link FakeLogConsumer}): order, memory
 * bound, failures. Each test uses its own partition number, so its fetcher threads have their own
 * names.
 */
class ConcurrentFetcherTest {
  private static final int RECORD_BYTES = 1_000;
  private final ReaderMetrics metrics = ReaderMetrics.noop(0);
  private final List<ConcurrentFetcher> fetchers = new ArrayList<>();
  private final CountDownLatch gate = new CountDownLatch(1);

  @AfterEach
  void tearDown() {
    gate.countDown();
    fetchers.forEach(ConcurrentFetcher::close);
  }

  private static List<ConsumerRecord<byte[], ByteBuffer>> log(TopicPartition tp, int records, int recordBytes) {
    byte[] value = new byte[recordBytes]; // shared: only its length matters
    List<ConsumerRecord<byte[], ByteBuffer>> log = new ArrayList<>();
    for (int i = 0; i < records; i++) {
      log.add(new ConsumerRecord<>(tp.topic(), tp.partition(), i, null, ByteBuffer.wrap(value)));
    }
    return log;
  }

  private ConcurrentFetcher fetcher(TopicPartition tp, long from, long to, int n, long maxAheadBytes,
      FakeLogConsumer.PollHook hook) {
    return fetcher(tp, from, to, n, maxAheadBytes, RECORD_BYTES, hook);
  }

  private ConcurrentFetcher fetcher(TopicPartition tp, long from, long to, int n, long maxAheadBytes, int recordBytes,
      FakeLogConsumer.PollHook hook) {
    List<ConsumerRecord<byte[], ByteBuffer>> log = log(tp, (int) to + 100, recordBytes);
    ConcurrentFetcher f = new ConcurrentFetcher(tp, from, to, n, maxAheadBytes,
        fetchBytes -> new FakeLogConsumer(tp, log, 37, hook), metrics);
    fetchers.add(f);
    return f;
  }

  /** What {@link ConcurrentFetcher#next} handed over until finished, with the largest window and held bytes seen. */
  private static final class Drained {
    final List<Long> offsets = new ArrayList<>();
    long largestWindowBytes;
    long mostHeldBytes;
  }

  /**
   * Takes every window; when {@code slow}, only once the fetchers have run ahead as far as they may
   * (every fetcher thread of the partition waits to claim a window), like a reader whose pipeline is
   * the bottleneck.
   */
  private static Drained drain(ConcurrentFetcher f, int partition, boolean slow) throws InterruptedException {
    Drained d = new Drained();
    while (!f.finished()) {
      if (slow) {
        await().pollInterval(Duration.ofMillis(5)).until(() -> fetchersIdle(partition) || f.finished());
      }
      d.mostHeldBytes = Math.max(d.mostHeldBytes, f.heldBytes());
      List<ConsumerRecord<byte[], ByteBuffer>> window = f.next(30_000);
      assertThat(window).as("a window within the wait").isNotNull();
      for (ConsumerRecord<byte[], ByteBuffer> r : window) {
        d.offsets.add(r.offset());
      }
      long bytes = window.stream().mapToLong(r -> r.value().remaining()).sum();
      d.largestWindowBytes = Math.max(d.largestWindowBytes, bytes);
    }
    return d;
  }

  private static List<Long> range(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  @Test
  void handsTheRangeOverInOffsetOrderAcrossWindows() throws Exception {
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 1), 100, 3_100, 3, 64 << 10, pos -> { });
    Drained d = drain(f, 1, false);
    assertThat(d.offsets).containsExactlyElementsOf(range(100, 3_100));
    assertThat(f.finished()).isTrue();
    assertThat(f.next(0)).as("nothing after the range").isEmpty();
    assertThat(f.heldBytes()).isZero();
  }

  @Test
  void heldBytesStayWithinMaxAheadWhileTheReaderIsSlow() throws Exception {
    long maxAhead = 64 << 10;
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 2), 0, 3_000, 3, maxAhead, pos -> { });
    Drained d = drain(f, 2, true);
    assertThat(d.offsets).containsExactlyElementsOf(range(0, 3_000));
    assertThat(d.mostHeldBytes).as("windows cut at their share of maxAheadBytes").isLessThanOrEqualTo(maxAhead);
  }

  @Test
  void heldBytesStayWithinMaxAheadWhenSlowFetchesFinishTogether() throws Exception {
    long maxAhead = 64 << 10;
    AtomicInteger waitingPolls = new AtomicInteger();
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 3), 0, 3_000, 3, maxAhead, pos -> {
      waitingPolls.incrementAndGet();
      gate.await();
    });
    // All three fetchers wait on the broker at once, then their fetches complete together.
    await().until(() -> waitingPolls.get() == 3);
    gate.countDown();
    Drained d = drain(f, 3, true);
    assertThat(d.offsets).containsExactlyElementsOf(range(0, 3_000));
    assertThat(d.mostHeldBytes).isLessThanOrEqualTo(maxAhead);
  }

  @Test
  void recordsLargerThanAWindowAreHeldOnePerWindow() throws Exception {
    long maxAhead = 64 << 10; // 4 slots of 16 KiB
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 7), 0, 200, 3, maxAhead, 40_000, pos -> { });
    Drained d = drain(f, 7, true);
    assertThat(d.offsets).containsExactlyElementsOf(range(0, 200));
    assertThat(d.largestWindowBytes).as("one record per window").isEqualTo(40_000);
    assertThat(d.mostHeldBytes).as("at most one record per slot").isGreaterThan(maxAhead).isLessThanOrEqualTo(4 * 40_000);
  }

  @Test
  void firstWindowsOfLargeRecordsStayWithinTheBound() throws Exception {
    long maxAhead = 1 << 20;
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 8), 0, 400, 2, maxAhead, 100_000, pos -> { });
    Drained d = drain(f, 8, true);
    assertThat(d.offsets).containsExactlyElementsOf(range(0, 400));
    assertThat(d.mostHeldBytes).isPositive().isLessThanOrEqualTo(maxAhead);
  }

  @Test
  void aWindowWhoseFetchFailsIsHandedOverAsTheException() throws Exception {
    long failingOffset = 500;
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 4), 0, 3_000, 3, 64 << 10, pos -> {
      if (pos <= failingOffset && failingOffset < pos + 37) {
        throw new KafkaException("corrupt record batch");
      }
    });
    List<Long> offsets = new ArrayList<>();
    Throwable thrown = catchThrowable(() -> {
      while (!f.finished()) {
        List<ConsumerRecord<byte[], ByteBuffer>> window = f.next(30_000);
        assertThat(window).isNotNull();
        window.forEach(r -> offsets.add(r.offset()));
      }
    });
    assertThat(thrown).isInstanceOf(KafkaException.class).hasMessage("corrupt record batch");
    assertThat(offsets).as("every window before the failed one, in order")
        .containsExactlyElementsOf(range(0, offsets.size()));
    assertThat(offsets.size()).isLessThanOrEqualTo((int) failingOffset);
    assertThat(f.finished()).isFalse();
  }

  @Test
  void aFetcherThatDiesUnexpectedlyIsHandedOverAsAFailureInsteadOfStallingTheReader() throws Exception {
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 9), 0, 1_000, 2, 64 << 10, pos -> {
      if (pos <= 300 && 300 < pos + 37) {
        throw new IllegalStateException("consumer bug");
      }
    });
    Throwable thrown = catchThrowable(() -> {
      while (!f.finished()) {
        assertThat(f.next(10_000)).as("a window, or the failure, within 10 s").isNotNull();
      }
    });
    assertThat(thrown).isNotNull().isNotInstanceOf(AssertionError.class);
  }

  @Test
  void transientFetchErrorsAreRetriedAndCounted() throws Exception {
    AtomicInteger failures = new AtomicInteger(3);
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 5), 0, 1_000, 2, 64 << 10, pos -> {
      if (pos <= 300 && 300 < pos + 37 && failures.getAndDecrement() > 0) {
        throw new TimeoutException("broker slow");
      }
    });
    assertThat(drain(f, 5, false).offsets).containsExactlyElementsOf(range(0, 1_000));
    assertThat(metrics.fetchErrors.count()).isEqualTo(3);
  }

  @Test
  void anEmptyRangeIsFinishedAtOnce() throws Exception {
    ConcurrentFetcher f = fetcher(new TopicPartition("t", 6), 50, 50, 2, 64 << 10, pos -> { });
    assertThat(f.finished()).isTrue();
    assertThat(f.next(0)).isEmpty();
  }

  /** Whether every fetcher thread of the partition waits in {@code claim()} (not fetching). */
  private static boolean fetchersIdle(int partition) {
    String prefix = "partition-reader-" + partition + "-fetcher-";
    return Thread.getAllStackTraces().entrySet().stream().filter(e -> e.getKey().getName().startsWith(prefix))
        .allMatch(e -> e.getKey().getState() == Thread.State.TERMINATED || isInClaim(e.getValue()));
  }

  private static boolean isInClaim(StackTraceElement[] stack) {
    for (StackTraceElement s : stack) {
      if (s.getClassName().equals(ConcurrentFetcher.class.getName()) && s.getMethodName().equals("claim")) {
        return true;
      }
    }
    return false;
  }
}
