package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How {@link KafkaRetry} keeps a Kafka call going through an outage, and how it stops. */
@Timeout(60) // a broken retry loop spins forever
class KafkaRetryTest {
  private final ReaderMetrics metrics = ReaderMetrics.noop(3);
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final List<@Nullable String> problems = Collections.synchronizedList(new ArrayList<>());
  private final KafkaRetry retry = new KafkaRetry(3, metrics, stopping::get, problems::add);
  private final AtomicInteger calls = new AtomicInteger();

  @Test
  void retriesKafkaExceptionsWithBackoffUntilTheCallSucceeds() throws Exception {
    String result = retry.call("reading the end offset", () -> {
      if (calls.incrementAndGet() <= 2) {
        throw new TimeoutException("broker down");
      }
      return "ok";
    });
    assertThat(result).isEqualTo("ok");
    assertThat(calls).hasValue(3);
    assertThat(metrics.kafkaCallErrors.count()).isEqualTo(2);
  }

  @Test
  void reportsTheProblemWhileFailingAndClearsItOnSuccess() throws Exception {
    retry.call("reading the committed offset", () -> {
      if (calls.incrementAndGet() == 1) {
        throw new KafkaException("no leader");
      }
      return 1L;
    });
    assertThat(problems).hasSize(2);
    assertThat(problems.get(0)).contains("reading the committed offset", "partition 3", "attempt 1", "no leader");
    assertThat(problems.get(1)).as("cleared once the call succeeds").isNull();
  }

  @Test
  void aCallThatSucceedsAtOnceReportsNoProblem() throws Exception {
    assertThat(retry.call("x", () -> 42)).isEqualTo(42);
    assertThat(problems).isEmpty();
    assertThat(metrics.kafkaCallErrors.count()).isZero();
  }

  @Test
  void wakeupExceptionFromTheCallPropagatesWithoutRetry() {
    assertThatThrownBy(() -> retry.call("x", () -> {
      calls.incrementAndGet();
      throw new WakeupException();
    })).isInstanceOf(WakeupException.class);
    assertThat(calls).hasValue(1);
    assertThat(metrics.kafkaCallErrors.count()).isZero();
  }

  @Test
  void stoppingDuringTheBackoffEndsTheWaitWithWakeupException() {
    assertThatThrownBy(() -> retry.call("x", () -> {
      calls.incrementAndGet();
      stopping.set(true);
      throw new TimeoutException("broker down");
    })).isInstanceOf(WakeupException.class);
    assertThat(calls).as("no attempt after the stop").hasValue(1);
  }

  @Test
  void stoppingBeforeTheCallDoesNotCallKafka() {
    stopping.set(true);
    assertThatThrownBy(() -> retry.call("x", calls::incrementAndGet)).isInstanceOf(WakeupException.class);
    assertThat(calls).hasValue(0);
  }

  @Test
  void aNonKafkaRuntimeExceptionPropagatesImmediately() {
    assertThatThrownBy(() -> retry.call("x", () -> {
      calls.incrementAndGet();
      throw new IllegalStateException("bug");
    })).isInstanceOf(IllegalStateException.class).hasMessage("bug");
    assertThat(calls).hasValue(1);
    assertThat(problems).isEmpty();
  }

  @Test
  void aStopRequestEndsALongBackoffWithWakeupException() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      AtomicReference<Thread> sleeper = new AtomicReference<>();
      Future<?> sleeping = executor.submit(() -> {
        sleeper.set(Thread.currentThread());
        retry.sleep(TimeUnit.HOURS.toMillis(1));
        return null;
      });
      await().until(() -> sleeper.get() != null && sleeper.get().getState() == Thread.State.TIMED_WAITING);
      stopping.set(true);
      assertThatThrownBy(() -> sleeping.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(WakeupException.class);
    } finally {
      executor.shutdownNow();
    }
  }
}
