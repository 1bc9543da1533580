package dev.weir.ingester.push;

/**
 * Carries how many exemplars a write stored from the handler that stored them back to the
 * endpoint that answers ({@code X-Prometheus-Remote-Write-Exemplars-Written}), without widening
 * {@link PushHandler}, as {@link ProducedOffsets} does for offsets: the endpoint runs the push
 * inside a {@link Tally}, and whoever knows the outcome reports it with {@link #record} on the same
 * thread. The ingester reports what its exemplar storage took (added, or identical to one stored:
 * a duplicate counts as written, as Prometheus' appender counts it); the classic distributor adds
 * what each ingester answered; the Kafka distributor what it produced. Exemplars refused, dropped
 * with their series, or not kept because the tenant's exemplar limit is 0 are never reported, so
 * the count is exact also when part of a request is refused. Outside a tally, {@link #record}
 * does nothing.
 *
 * <pre>{@code
 * ExemplarsWritten.Tally written = new ExemplarsWritten.Tally();
 * try {
 *   written.during(() -> push.push(tenant, request));
 * } finally {
 *   headers.put("...-Exemplars-Written", Long.toString(written.count()));
 * }
 * }</pre>
 *
 * <p>Thread-confined: one tally per thread at a time (a nested one hides the outer while it runs).
 */
public final class ExemplarsWritten {
  private static final ThreadLocal<Tally> CURRENT = new ThreadLocal<>();

  private ExemplarsWritten() {}

  /** Reports {@code n} exemplars stored to the tally running on this thread, if any. */
  public static void record(long n) {
    Tally t = CURRENT.get();
    if (t != null && n > 0) {
      t.count += n;
    }
  }

  /** The exemplars stored by the pushes run through it; keeps its count when a push throws. */
  public static final class Tally {
    private long count;

    /** Runs {@code push} with this tally receiving {@link #record}s; rethrows what it throws. */
    public void during(Runnable push) {
      Tally previous = CURRENT.get();
      CURRENT.set(this);
      try {
        push.run();
      } finally {
        if (previous == null) {
          CURRENT.remove();
        } else {
          CURRENT.set(previous);
        }
      }
    }

    /** Exemplars stored so far. */
    public long count() {
      return count;
    }
  }
}
