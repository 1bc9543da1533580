package dev.weir.ingester.api;

import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.push.Ingester;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.List;

/**
 * Where the read endpoints ({@link RemoteReadApi}, {@link PrometheusHttpApi}) get their data: the
 * local ingester ({@link #of}) or the querier's merge of remote sources. A request opens one
 * {@link Reader} for its tenant and consistency, then makes its calls on it:
 *
 * <pre>{@code
 * ReadSource.Reader r = source.reader("tenant-a", ReadLevel.STRONG);
 * List<SeriesChunks> series = r.select(mint, maxt, matchers);
 * }</pre>
 *
 * <p>Implementations are thread-safe; a reader serves one request.
 */
public interface ReadSource {
  /**
   * A reader for one request.
   *
   * @param level what the request asked to see ({@code X-Read-Consistency: strong}: every write
   *     accepted before it; {@code X-Read-Consistency-Offsets}: the named writes); the local
   *     ingester waits here, the querier passes it on to its ingesters
   */
  Reader reader(String tenant, ReadLevel level);

  /** {@link #reader(String, ReadLevel)} with strong or eventual consistency. */
  default Reader reader(String tenant, boolean strong) {
    return reader(tenant, strong ? ReadLevel.STRONG : ReadLevel.EVENTUAL);
  }

  /** The queries of one request; see {@link Ingester#select} for the semantics. */
  interface Reader {
    /** Series matching all matchers with data in {@code [mint, maxt]}, in label order. */
    List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers);

    /** Sorted label names of the matching series (all series when there are no matchers). */
    List<String> labelNames(long mint, long maxt, List<Matcher> matchers);

    /** Sorted values of label {@code name} of the matching series. */
    List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers);

    /**
     * How far each Kafka partition this reader's answers came from was consumed, the oldest
     * answer per partition among the calls made so far; empty in classic mode and for blocks.
     */
    default List<PartitionFreshness> freshness() {
      return List.of();
    }
  }

  /**
   * The local ingester: a read first waits on {@code consistency} as its level asks, then takes
   * the partition's freshness (so the data read is at least that fresh).
   */
  static ReadSource of(Ingester ingester, ReadConsistency consistency) {
    return (tenant, level) -> {
      consistency.await(level);
      List<PartitionFreshness> fresh = consistency.freshness();
      return new Reader() {
        @Override
        public List<PartitionFreshness> freshness() {
          return fresh;
        }

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
