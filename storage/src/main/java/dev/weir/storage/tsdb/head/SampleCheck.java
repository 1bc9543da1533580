package dev.weir.storage.tsdb.head;

import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where one sample of a commit goes, Prometheus' {@code memSeries.appendable} with Weir's
 * duplicate rules: into the in-order chunks, into the out-of-order head (within the window), a
 * silent duplicate, or refused. One per commit, under the head's append lock.
 *
 * <p>A sample older than its series' newest (or than the head's in-order lower bound) goes to the
 * out-of-order head when the window is on and it is not older than the head's newest time minus
 * the window; older still is {@link RejectReason#TOO_OLD}. Without a window the rules are as
 * before (out of order, out of bounds). Whatever the path, a sample at a timestamp the series
 * already holds — in order, out of order, or earlier in this commit — is a duplicate when its
 * value bits are equal, else {@link RejectReason#DUPLICATE_TIMESTAMP}.
 *
 * <p>Samples accepted earlier in the same commit are not in the series yet; they are found through
 * an index of the commit's accepted samples, built only once a sample takes the out-of-order
 * path (rare), so in-order commits pay nothing.
 *
 * <p>Not thread-safe.
 */
final class SampleCheck {
  static final byte REJECTED = 0;
  static final byte IN_ORDER = 1;
  static final byte OUT_OF_ORDER = 2;
  static final byte DUPLICATE = 3;

  private final long lowest;
  private final long window;
  /** The head's newest time, raised by the in-order samples accepted in this commit. */
  private long headMax;
  private final MemSeries[] batch;
  private final long[] ts;
  private final double[] vs;
  private final byte[] kinds;
  private @Nullable Map<MemSeries, Map<Long, Long>> pending;
  private @Nullable RejectReason reason;

  /**
   * @param lowest the in-order lower bound (out-of-bounds rule)
   * @param headMaxTime the head's newest sample time, or Long.MIN_VALUE when empty; the window is
   *     measured from it or from a newer in-order sample earlier in the commit (so a first commit
   *     into an empty head may carry out-of-order samples too)
   * @param window the out-of-order window in milliseconds; 0 = off
   * @param batch the commit's series; {@code ts}, {@code vs} its samples and {@code kinds} the
   *     decisions so far (this class reads the decided ones when it builds its index)
   */
  SampleCheck(long lowest, long headMaxTime, long window, MemSeries[] batch, long[] ts, double[] vs, byte[] kinds) {
    this.batch = batch;
    this.ts = ts;
    this.vs = vs;
    this.kinds = kinds;
    this.lowest = lowest;
    this.window = window;
    this.headMax = headMaxTime;
  }

  /** Why the last {@link #check} returned {@link #REJECTED}. */
  RejectReason reason() {
    return java.util.Objects.requireNonNull(reason);
  }

  /**
   * Classifies sample {@code i} of the batch (every sample before it is decided).
   *
   * @param has whether the series holds an in-order sample (stored or pending in this commit)
   * @param seriesMax the series' newest in-order time (pending included), if {@code has}
   * @param lastBits the value bits of that newest sample
   * @param oooHeld whether the series holds out-of-order samples ({@link MemSeries#hasOoo})
   */
  byte check(int i, boolean has, long seriesMax, long lastBits, boolean oooHeld) {
    MemSeries s = batch[i];
    long t = ts[i];
    long bits = Double.doubleToRawLongBits(vs[i]);
    if (window <= 0) {
      return checkWithoutWindow(s, t, bits, has, seriesMax, lastBits, oooHeld);
    }
    if (t >= lowest && (!has || t > seriesMax)) {
      int held = pending == null && !oooHeld ? SampleLookup.ABSENT : lookup(s, t, bits);
      if (held != SampleLookup.ABSENT) {
        return duplicate(held);
      }
      headMax = Math.max(headMax, t);
      return accepted(s, t, bits, IN_ORDER);
    }
    if (t >= lowest && t == seriesMax) {
      return bits == lastBits ? DUPLICATE : reject(RejectReason.DUPLICATE_TIMESTAMP);
    }
    if (pending == null) {
      buildIndex(i);
    }
    int held = lookup(s, t, bits);
    if (held != SampleLookup.ABSENT) {
      return duplicate(held);
    }
    return headMax != Long.MIN_VALUE && t >= headMax - window ? accepted(s, t, bits, OUT_OF_ORDER)
        : reject(RejectReason.TOO_OLD);
  }

  private byte checkWithoutWindow(MemSeries s, long t, long bits, boolean has, long seriesMax, long lastBits,
      boolean oooHeld) {
    if (has && t < seriesMax) {
      return s.lookup(t, bits) == SampleLookup.SAME ? DUPLICATE : reject(RejectReason.OUT_OF_ORDER);
    }
    if (has && t == seriesMax) {
      return bits == lastBits ? DUPLICATE : reject(RejectReason.DUPLICATE_TIMESTAMP);
    }
    if (t < lowest) {
      return reject(RejectReason.OUT_OF_BOUNDS);
    }
    // out-of-order data stored while the tenant had a window (a runtime override changed since)
    int held = oooHeld ? s.lookup(t, bits) : SampleLookup.ABSENT;
    return held == SampleLookup.ABSENT ? IN_ORDER : duplicate(held);
  }

  /** Records an accepted sample of this commit once the index exists. */
  private byte accepted(MemSeries s, long t, long bits, byte kind) {
    if (pending != null) {
      pending.computeIfAbsent(s, k -> new HashMap<>()).put(t, bits);
    }
    return kind;
  }

  /** Indexes the samples accepted before sample {@code upTo}. */
  private void buildIndex(int upTo) {
    Map<MemSeries, Map<Long, Long>> p = new HashMap<>();
    for (int j = 0; j < upTo; j++) {
      if (kinds[j] == IN_ORDER || kinds[j] == OUT_OF_ORDER) {
        p.computeIfAbsent(batch[j], k -> new HashMap<>()).put(ts[j], Double.doubleToRawLongBits(vs[j]));
      }
    }
    pending = p;
  }

  private int lookup(MemSeries s, long t, long bits) {
    Map<Long, Long> p = pending == null ? null : pending.get(s);
    Long b = p == null ? null : p.get(t);
    if (b != null) {
      return b == bits ? SampleLookup.SAME : SampleLookup.DIFFERENT;
    }
    return s.lookup(t, bits);
  }

  private byte duplicate(int held) {
    return held == SampleLookup.SAME ? DUPLICATE : reject(RejectReason.DUPLICATE_TIMESTAMP);
  }

  /**
   * Native histogram samples have no out-of-order path (out-of-order histograms are refused as
   * {@link RejectReason#OUT_OF_ORDER}): in order, an identical duplicate, or refused.
   */
  byte checkHistogram(MemSeries s, long t, dev.weir.storage.tsdb.chunk.NativeHistogram h, boolean has,
      long seriesMax, dev.weir.storage.tsdb.chunk.@Nullable NativeHistogram lastH) {
    if (has && t < seriesMax) {
      return s.holdsHistogram(t, h) ? DUPLICATE : reject(RejectReason.OUT_OF_ORDER);
    }
    if (has && t == seriesMax) {
      return lastH != null && HistogramHead.sameValue(h, lastH) ? DUPLICATE
          : reject(RejectReason.DUPLICATE_TIMESTAMP);
    }
    if (t < lowest) {
      return reject(RejectReason.OUT_OF_BOUNDS);
    }
    return IN_ORDER;
  }

  /** Refuses the sample for {@code r} (a decision made by the caller). */
  byte rejectWith(RejectReason r) {
    return reject(r);
  }

  private byte reject(RejectReason r) {
    reason = r;
    return REJECTED;
  }
}
