package dev.weir.ingester.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ServiceManagerTest {
  private final List<String> events = new ArrayList<>();

  private Service service(String name, CountDownLatch startGate, RuntimeException startFailure) {
    return new Service() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public void start() throws Exception {
        synchronized (events) {
          events.add("start " + name);
        }
        startGate.await();
        if (startFailure != null) {
          throw startFailure;
        }
      }

      @Override
      public void stop() {
        synchronized (events) {
          events.add("stop " + name);
        }
      }
    };
  }

  @Test
  void readinessAnswersWhileAServiceIsStillStarting() throws Exception {
    CountDownLatch open = new CountDownLatch(0);
    CountDownLatch blocked = new CountDownLatch(1);
    ServiceManager m = new ServiceManager(List.of(service("http", open, null), service("reader", blocked, null)));
    CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> {
      try {
        m.startAll();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    // The reader's start blocks (Kafka unreachable): the answer must come now, not after it.
    await().atMost(5, TimeUnit.SECONDS).until(() -> m.state("reader") == ServiceManager.State.STARTING);
    String reason = CompletableFuture.supplyAsync(m::notReadyReason).get(5, TimeUnit.SECONDS);
    assertThat(reason).isEqualTo("service reader is STARTING");
    assertThat(m.state("http")).isEqualTo(ServiceManager.State.RUNNING);
    blocked.countDown();
    starting.get(5, TimeUnit.SECONDS);
    assertThat(m.notReadyReason()).isNull();
    m.stopAll();
    assertThat(events).containsExactly("start http", "start reader", "stop reader", "stop http");
  }

  @Test
  void aFailedStartStopsWhatStartedInReverseAndRethrows() {
    CountDownLatch open = new CountDownLatch(0);
    ServiceManager m = new ServiceManager(List.of(service("a", open, null), service("b", open, null),
        service("c", open, new IllegalStateException("no disk"))));
    assertThatThrownBy(m::startAll).hasMessage("no disk");
    assertThat(events).containsExactly("start a", "start b", "start c", "stop b", "stop a");
    assertThat(m.state("c")).isEqualTo(ServiceManager.State.FAILED);
    assertThat(m.state("a")).isEqualTo(ServiceManager.State.TERMINATED);
    m.stopAll(); // the failed one is stopped too, once, to release what its start took
    assertThat(events).endsWith("stop c").filteredOn(e -> e.startsWith("stop")).hasSize(3);
  }
}
