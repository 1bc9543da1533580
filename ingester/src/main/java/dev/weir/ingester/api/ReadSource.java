package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.push.Ingester;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.List;

/**
 * Where the read endpoints ({@link RemoteReadApi}, {@link PrometheusHttpApi}) get their data: the
 * local ingester ({@link #of}) or the querier's merge of remote sources. A request opens one
 * {@link Reader} for its tenant and consistency, then makes its calls on it:
 *
 * <pre>{@code
 * ReadSource.Reader r = source.reader("tenant-a", strong);
 * List<SeriesChunks> series = r.select(mint, maxt, matchers);
 * }</pre>
 *
 * <p>Implementations are thread-safe; a reader serves one request.
 */
public interface ReadSource {
  /**
   * A reader for one request.
   *
   * @param strong the request asked for {@code X-Read-Consistency: strong}: every write accepted
   *     before it must be readable (the local ingester waits here; the querier asks its sources)
   */
  Reader reader(String tenant, boolean strong);

  /** The queries of one request; see {@link Ingester#select} for the semantics. */
  interface Reader {
    /** Series matching all matchers with data in {@code [mint, maxt]}, in label order. */
    List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers);

    /** Sorted label names of the matching series (all series when there are no matchers). */
    List<String> labelNames(long mint, long maxt, List<Matcher> matchers);

    /** Sorted values of label {@code name} of the matching series. */
    List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers);
  }

  /** The local ingester; a strong read first waits on {@code consistency}. */
  static ReadSource of(Ingester ingester, ReadConsistency consistency) {
    return (tenant, strong) -> {
      if (strong) {
        consistency.awaitStrong();
      }
      return new Reader() {
        @Override
        public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
          return ingester.select(tenant, mint, maxt, matchers);
        }

        @Override
        public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
          return ingester.labelNames(tenant, mint, maxt, matchers);
        }

        @Override
        public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
          return ingester.labelValues(tenant, name, mint, maxt, matchers);
        }
      };
    };
  }
}
