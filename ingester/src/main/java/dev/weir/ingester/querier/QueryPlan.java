package dev.weir.ingester.querier;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Which sources a query range needs, as Mimir decides it: ingesters hold the last
 * {@code query-ingesters-within}, store-gateways everything older than {@code query-store-after};
 * the range sent to each kind is cut to its window, and a kind whose window the range misses is not
 * asked. The windows overlap (ingesters-within &gt; store-after), so a sample near the edge may come
 * from both; the merge drops the copy.
 *
 * @param ingesters the range to ask ingesters for, or null to skip them
 * @param stores the range to ask store-gateways for, or null to skip them
 */
public record QueryPlan(@Nullable Range ingesters, @Nullable Range stores) {

  /** An inclusive range of milliseconds. */
  public record Range(long mint, long maxt) {}

  /**
   * @param queryIngestersWithin 0: ingesters are asked for the whole range
   * @param queryStoreAfter 0: store-gateways are asked for the whole range
   */
  public static QueryPlan of(long mint, long maxt, long now, Duration queryIngestersWithin,
      Duration queryStoreAfter) {
    Range ingesters = new Range(mint, maxt);
    if (!queryIngestersWithin.isZero()) {
      ingesters = cut(mint, maxt, saturatedMinus(now, queryIngestersWithin.toMillis()), Long.MAX_VALUE);
    }
    Range stores = new Range(mint, maxt);
    if (!queryStoreAfter.isZero()) {
      stores = cut(mint, maxt, Long.MIN_VALUE, saturatedMinus(now, queryStoreAfter.toMillis()));
    }
    return new QueryPlan(ingesters, stores);
  }

  private static @Nullable Range cut(long mint, long maxt, long lo, long hi) {
    long from = Math.max(mint, lo);
    long to = Math.min(maxt, hi);
    return from > to ? null : new Range(from, to);
  }

  private static long saturatedMinus(long a, long b) {
    long r = a - b;
    return ((a ^ b) & (a ^ r)) < 0 ? Long.MIN_VALUE : r;
  }
}
