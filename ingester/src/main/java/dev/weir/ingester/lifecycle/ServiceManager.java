package dev.weir.ingester.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts services in order, stops them in reverse, and answers whether all of them are running
 * and ready (the {@code /ready} endpoint).
 *
 * <p>Thread-safe: {@link #startAll()} and {@link #stopAll()} run one at a time (a lifecycle lock);
 * states and readiness may be asked from any thread at any moment, also while a service's start
 * blocks (a reader waiting for Kafka): {@code /ready} then answers 503 "is STARTING" at once.
 */
public final class ServiceManager {
  private static final Logger log = LoggerFactory.getLogger(ServiceManager.class);

  /** Service states as Mimir's services report them. */
  public enum State {
    NEW,
    STARTING,
    RUNNING,
    STOPPING,
    TERMINATED,
    FAILED
  }

  private final List<Service> services;
  private final State[] states;
  private final CountDownLatch terminated = new CountDownLatch(1);
  /** Held while starting or stopping services; the states have their own (short) lock, {@code this}. */
  private final Object lifecycle = new Object();
  private volatile boolean stopping;

  public ServiceManager(List<Service> services) {
    this.services = List.copyOf(services);
    this.states = new State[services.size()];
    java.util.Arrays.fill(states, State.NEW);
  }

  /** Starts every service in order; on a failure stops those already started and rethrows. */
  public void startAll() throws Exception {
    synchronized (lifecycle) {
      startInOrder();
    }
  }

  private void startInOrder() throws Exception {
    for (int i = 0; i < services.size(); i++) {
      Service s = services.get(i);
      setState(i, State.STARTING);
      log.info("msg=\"starting service\" service={}", s.name());
      try {
        s.start();
      } catch (Exception | Error e) {
        setState(i, State.FAILED);
        log.error("msg=\"service failed to start\" service={} err=\"{}\"", s.name(), e.toString());
        stopRange(i);
        terminated.countDown();
        throw e;
      }
      setState(i, State.RUNNING);
    }
    log.info("msg=\"all services started\" services={}", services.size());
  }

  /** Stops every started service in reverse order; later calls do nothing. */
  public void stopAll() {
    synchronized (lifecycle) {
      if (stopping) {
        return;
      }
      stopping = true;
      stopRange(services.size());
      terminated.countDown();
    }
  }

  private void stopRange(int endExclusive) {
    for (int i = endExclusive - 1; i >= 0; i--) {
      State was = state(i);
      if (was == State.NEW || was == State.TERMINATED) {
        continue;
      }
      Service s = services.get(i);
      boolean failed = was == State.FAILED;
      setState(i, State.STOPPING);
      log.info("msg=\"stopping service\" service={}", s.name());
      try {
        s.stop();
        setState(i, failed ? State.FAILED : State.TERMINATED);
      } catch (Exception e) {
        setState(i, State.FAILED);
        log.error("msg=\"service failed to stop cleanly\" service={} err=\"{}\"", s.name(), e.toString());
      }
    }
  }

  private synchronized void setState(int i, State s) {
    states[i] = s;
  }

  private synchronized State state(int i) {
    return states[i];
  }

  public synchronized State state(String name) {
    for (int i = 0; i < services.size(); i++) {
      if (services.get(i).name().equals(name)) {
        return states[i];
      }
    }
    throw new IllegalArgumentException("no service " + name);
  }

  /** Null when every service runs and is ready; otherwise the reasons, one per line. */
  public @Nullable String notReadyReason() {
    List<String> reasons = new ArrayList<>();
    synchronized (this) {
      for (int i = 0; i < services.size(); i++) {
        if (states[i] != State.RUNNING) {
          reasons.add("service " + services.get(i).name() + " is " + states[i]);
        }
      }
    }
    if (reasons.isEmpty()) {
      for (Service s : services) {
        String r = s.notReadyReason();
        if (r != null) {
          reasons.add(s.name() + ": " + r);
        }
      }
    }
    return reasons.isEmpty() ? null : String.join("\n", reasons);
  }

  /** Blocks until {@link #stopAll()} finished or start-up failed. */
  public void awaitTerminated() throws InterruptedException {
    terminated.await();
  }
}
