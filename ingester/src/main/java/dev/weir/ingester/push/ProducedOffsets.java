package dev.weir.ingester.push;

import java.util.Map;
import java.util.TreeMap;

/**
 * Carries the Kafka offsets a write produced from the distributor back to the endpoint that
 * answers it ({@code X-Weir-Produced-Offsets} on HTTP, response metadata on gRPC), without widening
 * {@link PushHandler} and every wrapper around it: the endpoint runs the push inside {@link
 * #capture}, and {@code KafkaDistributor} reports what it produced with {@link #record} on the
 * same thread (its write is synchronous). Outside a capture, {@link #record} does nothing.
 *
 * <pre>{@code
 * Map<Integer, Long> produced = ProducedOffsets.capture(() -> push.push(tenant, request));
 * }</pre>
 *
 * <p>Thread-confined: one capture per thread at a time.
 */
public final class ProducedOffsets {
  private static final ThreadLocal<Map<Integer, Long>> CURRENT = new ThreadLocal<>();

  private ProducedOffsets() {}

  /**
   * Runs the push and returns partition → last offset it produced (empty when nothing was
   * produced, e.g. classic mode). When the push throws, nothing is returned.
   */
  public static Map<Integer, Long> capture(Runnable push) {
    Map<Integer, Long> previous = CURRENT.get();
    Map<Integer, Long> mine = new TreeMap<>();
    CURRENT.set(mine);
    try {
      push.run();
      return mine;
    } finally {
      if (previous == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(previous);
      }
    }
  }

  /** Reports produced offsets to the capture running on this thread, if any. */
  public static void record(Map<Integer, Long> produced) {
    Map<Integer, Long> m = CURRENT.get();
    if (m != null) {
      produced.forEach((p, o) -> m.merge(p, o, Math::max));
    }
  }
}
