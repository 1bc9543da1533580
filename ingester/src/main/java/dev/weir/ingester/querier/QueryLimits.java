package dev.weir.ingester.querier;

import dev.weir.storage.errors.ClientErrorException;

/**
 * The per-query caps of the querier; 0 = unlimited. The merged result is checked as it grows, and
 * each source's stream on its own too: a merge has at least as many series and samples as any one
 * of its inputs, so a source over a cap dooms the query and is cancelled early.
 *
 * @param maxSeries {@code querier.max-fetched-series-per-query}
 * @param maxSamples {@code querier.max-fetched-samples-per-query}
 */
public record QueryLimits(long maxSeries, long maxSamples) {
  public static final QueryLimits UNLIMITED = new QueryLimits(0, 0);

  /** @throws ClientErrorException 422 naming the cap and its flag when a count is over it */
  public void check(long series, long samples) {
    if (maxSeries > 0 && series > maxSeries) {
      throw new ClientErrorException("query_limit", "the query selects more than " + maxSeries
          + " series, the limit (--querier.max-fetched-series-per-query)", 422);
    }
    if (maxSamples > 0 && samples > maxSamples) {
      throw new ClientErrorException("query_limit", "the query selects more than " + maxSamples
          + " samples, the limit (--querier.max-fetched-samples-per-query)", 422);
    }
  }
}
