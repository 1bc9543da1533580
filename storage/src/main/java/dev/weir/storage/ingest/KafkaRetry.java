package dev.weir.storage.ingest;

import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a Kafka call until it succeeds: a broker that is restarting, unreachable or slow to elect a
 * leader must delay the reader, never end it. While a call keeps failing the owner is told why
 * (its not-ready reason); once it succeeds the reason is cleared. Backoff doubles from
 * {@value #FIRST_BACKOFF_MILLIS} ms to {@value #MAX_BACKOFF_MILLIS} ms. A stop request ends the
 * wait with a {@link WakeupException}, as a woken consumer would.
 *
 * <p>Used by one thread (the reader's).
 */
final class KafkaRetry {
  private static final Logger log = LoggerFactory.getLogger(KafkaRetry.class);
  static final long FIRST_BACKOFF_MILLIS = 100;
  static final long MAX_BACKOFF_MILLIS = 5_000;
  /** Steps of a backoff sleep, so that a stop is noticed quickly. */
  private static final long SLEEP_STEP_MILLIS = 100;

  private final int partition;
  private final ReaderMetrics metrics;
  private final BooleanSupplier stopping;
  private final Consumer<@Nullable String> problem;

  /**
   * @param problem receives a description while a call keeps failing, and null once it succeeds
   */
  KafkaRetry(int partition, ReaderMetrics metrics, BooleanSupplier stopping, Consumer<@Nullable String> problem) {
    this.partition = partition;
    this.metrics = metrics;
    this.stopping = stopping;
    this.problem = problem;
  }

  /**
   * The call's result, after as many attempts as it takes.
   *
   * @param what what the call does, for the log and the not-ready reason ("reading the committed offset")
   * @throws WakeupException when the reader is stopping
   */
  <T> T call(String what, Supplier<T> call) throws InterruptedException {
    long backoff = FIRST_BACKOFF_MILLIS;
    int attempt = 0;
    while (true) {
      if (stopping.getAsBoolean()) {
        throw new WakeupException();
      }
      try {
        T result = call.get();
        if (attempt > 0) {
          log.info("msg=\"Kafka reachable again\" partition={} call=\"{}\" attempts={}", partition, what, attempt + 1);
          problem.accept(null);
        }
        return result;
      } catch (WakeupException e) {
        throw e;
      } catch (KafkaException e) {
        attempt++;
        metrics.kafkaCallErrors.increment();
        String reason = "Kafka unavailable while " + what + " for partition " + partition + " (attempt " + attempt
            + ", retrying): " + e;
        problem.accept(reason);
        if (attempt == 1 || attempt % 10 == 0) {
          log.warn("msg=\"Kafka call failed, retrying\" partition={} call=\"{}\" attempt={} backoff_ms={} err=\"{}\"",
              partition, what, attempt, backoff, e.toString());
        }
        sleep(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }

  /** Sleeps in short steps; a stop request ends it early with a {@link WakeupException}. */
  void sleep(long millis) throws InterruptedException {
    long end = System.currentTimeMillis() + millis;
    long left;
    while ((left = end - System.currentTimeMillis()) > 0) {
      if (stopping.getAsBoolean()) {
        throw new WakeupException();
      }
      Thread.sleep(Math.min(left, SLEEP_STEP_MILLIS));
    }
  }
}
