package dev.weir.ingester.querier;

import dev.weir.ingester.api.Matchers;
import dev.weir.ingester.api.ReadSource;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.MetricsMetadataRequest;
import dev.weir.proto.ingester.MetricsMetadataResponse;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The querier as a {@link ReadSource}, so the ingester's own read endpoints serve it unchanged:
 * each call asks the sources its time range needs ({@link QueryPlan}) all at once, and merges
 * their answers ({@link SeriesMerger} for series, a sorted union for label names and values).
 * Merged series are handed on as XOR chunks of at most {@value #SAMPLES_PER_CHUNK} samples, which
 * remote read streams as they are.
 *
 * <pre>{@code
 * Querier q = new Querier(config, sources, limits, metrics, System::currentTimeMillis);
 * List<SeriesChunks> s = q.reader("tenant", false).select(mint, maxt, matchers);
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Querier implements ReadSource {
  /** Prometheus' own chunk size (120 samples), which its remote-read clients expect. */
  static final int SAMPLES_PER_CHUNK = 120;
  private static final String INGESTER = "ingester";
  private static final String STORE_GATEWAY = "store-gateway";

  private final QuerierConfig config;
  private final QuerySources sources;
  private final SourceCalls calls;
  private final QueryLimits limits;
  private final QuerierMetrics metrics;
  private final LongSupplier clock;

  public Querier(QuerierConfig config, QuerySources sources, QueryLimits limits, QuerierMetrics metrics,
      LongSupplier clock) {
    this.config = config;
    this.sources = sources;
    this.calls = new SourceCalls(sources, config.timeout(), metrics);
    this.limits = limits;
    this.metrics = metrics;
    this.clock = clock;
  }

  @Override
  public Reader reader(String tenant, boolean strong) {
    return new Reader() {
      @Override
      public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.select(tenant, strong, mint, maxt, matchers);
      }

      @Override
      public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.labelNames(tenant, strong, mint, maxt, matchers);
      }

      @Override
      public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.labelValues(tenant, strong, name, mint, maxt, matchers);
      }
    };
  }

  /** A range and which sources get it: the calls to make. */
  private <Q> List<SourceCalls.Call<Q>> plan(String tenant, long mint, long maxt, RangeRequest<Q> request) {
    QueryPlan plan = QueryPlan.of(mint, maxt, clock.getAsLong(), config.queryIngestersWithin(),
        config.queryStoreAfter());
    List<SourceCalls.Call<Q>> out = new ArrayList<>();
    QueryPlan.Range r = plan.ingesters();
    if (r != null) {
      Q q = request.build(r.mint(), r.maxt());
      for (QuerySources.Target t : sources.ingesters()) {
        out.add(new SourceCalls.Call<>(t, INGESTER, q));
      }
    }
    r = plan.stores();
    if (r != null) {
      Q q = request.build(r.mint(), r.maxt());
      for (QuerySources.Target t : sources.storeGateways(tenant)) {
        out.add(new SourceCalls.Call<>(t, STORE_GATEWAY, q));
      }
    }
    return out;
  }

  @FunctionalInterface
  private interface RangeRequest<Q> {
    Q build(long mint, long maxt);
  }

  private List<SeriesChunks> select(String tenant, boolean strong, long mint, long maxt, List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<QueryRequest>> planned = plan(tenant, mint, maxt, (from, to) -> QueryRequest
        .newBuilder().setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<List<TimeSeries>> answers;
    List<SeriesMerger.Series> merged;
    SeriesMerger merger = new SeriesMerger(limits);
    try {
      answers = calls.all("QueryStream", tenant, strong, planned, SourceCalls.queryStream(limits));
      merged = merger.merge(answers);
    } catch (ClientErrorException e) {
      metrics.refused(e.reason());
      throw e;
    }
    metrics.merged(merger.duplicates(), merger.conflicts());
    List<SeriesChunks> out = new ArrayList<>(merged.size());
    for (SeriesMerger.Series s : merged) {
      out.add(chunks(s));
    }
    return out;
  }

  private List<String> labelNames(String tenant, boolean strong, long mint, long maxt, List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<LabelNamesRequest>> planned = plan(tenant, mint, maxt, (from, to) -> LabelNamesRequest
        .newBuilder().setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<LabelNamesResponse> answers = calls.all("LabelNames", tenant, strong, planned,
        (stub, future, req) -> future.labelNames(req));
    TreeSet<String> union = new TreeSet<>();
    answers.forEach(a -> union.addAll(a.getLabelNamesList()));
    return List.copyOf(union);
  }

  private List<String> labelValues(String tenant, boolean strong, String name, long mint, long maxt,
      List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<LabelValuesRequest>> planned = plan(tenant, mint, maxt, (from, to) -> LabelValuesRequest
        .newBuilder().setLabelName(name).setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<LabelValuesResponse> answers = calls.all("LabelValues", tenant, strong, planned,
        (stub, future, req) -> future.labelValues(req));
    TreeSet<String> union = new TreeSet<>();
    answers.forEach(a -> union.addAll(a.getLabelValuesList()));
    return List.copyOf(union);
  }

  /**
   * The tenant's metric metadata gathered from every ingester the querier reads (in Kafka mode one
   * owner per partition: each knows the metadata of the records it consumed), by family name;
   * where two disagree, the first answer in ring order wins. Store-gateways are not asked: blocks
   * carry no metadata.
   */
  public SortedMap<String, MetricMetadata> metadata(String tenant) {
    List<SourceCalls.Call<MetricsMetadataRequest>> planned = new ArrayList<>();
    for (QuerySources.Target t : sources.ingesters()) {
      planned.add(new SourceCalls.Call<>(t, INGESTER, MetricsMetadataRequest.getDefaultInstance()));
    }
    List<MetricsMetadataResponse> answers = calls.all("MetricsMetadata", tenant, false, planned,
        (stub, future, req) -> future.metricsMetadata(req));
    SortedMap<String, MetricMetadata> out = new TreeMap<>();
    for (MetricsMetadataResponse a : answers) {
      for (MetricMetadata m : a.getMetadataList()) {
        out.putIfAbsent(m.getMetricFamilyName(), m);
      }
    }
    return out;
  }

  /** A merged series as XOR chunks of at most {@link #SAMPLES_PER_CHUNK} samples. */
  static SeriesChunks chunks(SeriesMerger.Series s) {
    List<ChunkData> chunks = new ArrayList<>();
    long[] t = s.timestamps();
    double[] v = s.values();
    for (int from = 0; from < t.length; from += SAMPLES_PER_CHUNK) {
      int to = Math.min(t.length, from + SAMPLES_PER_CHUNK);
      XorAppender a = new XorAppender();
      for (int i = from; i < to; i++) {
        a.append(t[i], v[i]);
      }
      chunks.add(new ChunkData(t[from], t[to - 1], a.bytes()));
    }
    return new SeriesChunks(s.labels(), chunks);
  }
}
