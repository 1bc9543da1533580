package dev.weir.storage.ingest;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A {@link Pusher} that records what it receives per series and can fail on demand: server
 * errors while {@link #failing} is set (for series matching {@link #failWhen}), client errors for
 * series named "bad". Thread-safe.
 */
final class RecordingPusher implements Pusher {
  final Map<String, List<Long>> samples = new ConcurrentHashMap<>();
  final AtomicLong total = new AtomicLong();
  final AtomicBoolean failing = new AtomicBoolean();
  final AtomicLong serverErrors = new AtomicLong();
  volatile Predicate<TimeSeries> failWhen = ts -> true;
  volatile long delayMillis;
  /** When set, every push throws this (an unexpected failure: a bug, an Error). */
  volatile java.util.function.@org.jspecify.annotations.Nullable Supplier<Throwable> crash;
  final List<String> orderViolations = new ArrayList<>();

  @Override
  public void push(String tenant, WriteRequest request) {
    if (delayMillis > 0) {
      try {
        Thread.sleep(delayMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    java.util.function.Supplier<Throwable> c = crash;
    if (c != null) {
      Throwable t = c.get();
      if (t instanceof Error e) {
        throw e;
      }
      throw (RuntimeException) t;
    }
    if (failing.get() && request.getTimeseriesList().stream().anyMatch(failWhen)) {
      serverErrors.incrementAndGet();
      throw new ServerErrorException("injected storage failure");
    }
    boolean bad = false;
    for (TimeSeries ts : request.getTimeseriesList()) {
      String key = tenant + "/" + key(ts);
      if (key.endsWith("name=bad")) {
        bad = true;
        continue;
      }
      List<Long> l = samples.computeIfAbsent(key, k -> new ArrayList<>());
      synchronized (l) {
        for (Sample s : ts.getSamplesList()) {
          if (!l.isEmpty() && l.get(l.size() - 1) >= s.getTimestamp()) {
            synchronized (orderViolations) {
              orderViolations.add(key + " got " + s.getTimestamp() + " after " + l.get(l.size() - 1));
            }
          }
          l.add(s.getTimestamp());
          total.incrementAndGet();
        }
      }
    }
    if (bad) {
      throw new ClientErrorException("label_invalid", "series named bad");
    }
  }

  static String key(TimeSeries ts) {
    StringBuilder sb = new StringBuilder();
    for (Label l : ts.getLabelsList()) {
      sb.append(sb.length() > 0 ? "," : "").append(l.getName()).append('=').append(l.getValue());
    }
    return sb.toString();
  }
}
