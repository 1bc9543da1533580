package dev.weir.ingester.querier;

import dev.weir.ingester.api.Matchers;
import dev.weir.ingester.api.QueryingIngesterService;
import dev.weir.ingester.api.ReadSource;
import dev.weir.ingester.api.UserLag;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.proto.ingester.LabelNamesRequest;
import dev.weir.proto.ingester.LabelNamesResponse;
import dev.weir.proto.ingester.LabelValuesRequest;
import dev.weir.proto.ingester.LabelValuesResponse;
import dev.weir.proto.ingester.PartitionLag;
import dev.weir.proto.ingester.MetricsMetadataRequest;
import dev.weir.proto.ingester.MetricsMetadataResponse;
import dev.weir.proto.ingester.QueryRequest;
import dev.weir.proto.ingester.UserLagRequest;
import dev.weir.proto.ingester.UserLagResponse;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.tsdb.chunk.HistogramValues;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
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
 * List<SeriesChunks> s = q.reader("tenant", ReadLevel.EVENTUAL).select(mint, maxt, matchers);
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
  public Reader reader(String tenant, ReadLevel level) {
    Freshness fresh = new Freshness();
    return new Reader() {
      @Override
      public List<SeriesChunks> select(long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.select(tenant, level, fresh, mint, maxt, matchers);
      }

      @Override
      public List<String> labelNames(long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.labelNames(tenant, level, fresh, mint, maxt, matchers);
      }

      @Override
      public List<String> labelValues(String name, long mint, long maxt, List<Matcher> matchers) {
        return Querier.this.labelValues(tenant, level, fresh, name, mint, maxt, matchers);
      }

      @Override
      public List<PartitionFreshness> freshness() {
        return fresh.oldest();
      }
    };
  }

  /**
   * The ingesters' freshness reports of one request, kept per partition as the least consumed
   * (unknown counts as least) and not ready if any answer said so. Thread-safe.
   */
  static final class Freshness {
    private final Map<Integer, PartitionFreshness> byPartition = new ConcurrentHashMap<>();

    void add(List<PartitionLag> reports) {
      for (PartitionLag p : reports) {
        PartitionFreshness f = QueryingIngesterService.fromProto(p);
        byPartition.merge(f.partition(), f, (a, b) -> {
          PartitionFreshness older = b.consumedUpToMillis() < a.consumedUpToMillis() ? b : a;
          boolean ready = a.ready() && b.ready();
          return new PartitionFreshness(older.partition(), older.consumedOffset(), older.endOffset(),
              older.recordsBehind(), older.consumedUpToMillis(), ready);
        });
      }
    }

    List<PartitionFreshness> oldest() {
      List<PartitionFreshness> out = new ArrayList<>(byPartition.values());
      out.sort(Comparator.comparingInt(PartitionFreshness::partition));
      return out;
    }
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

  private List<SeriesChunks> select(String tenant, ReadLevel level, Freshness fresh, long mint, long maxt,
      List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<QueryRequest>> planned = plan(tenant, mint, maxt, (from, to) -> QueryRequest
        .newBuilder().setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<SeriesMerger.Series> merged;
    SeriesMerger merger = new SeriesMerger(limits);
    try {
      List<SourceCalls.Streamed> answers = calls.all("QueryStream", tenant, level, planned,
          SourceCalls.queryStream(limits));
      List<List<TimeSeries>> series = new ArrayList<>(answers.size());
      for (SourceCalls.Streamed a : answers) {
        series.add(a.series());
        fresh.add(a.freshness());
      }
      merged = merger.merge(series);
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

  private List<String> labelNames(String tenant, ReadLevel level, Freshness fresh, long mint, long maxt,
      List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<LabelNamesRequest>> planned = plan(tenant, mint, maxt, (from, to) -> LabelNamesRequest
        .newBuilder().setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<LabelNamesResponse> answers = calls.all("LabelNames", tenant, level, planned,
        (stub, future, req) -> future.labelNames(req));
    TreeSet<String> union = new TreeSet<>();
    answers.forEach(a -> union.addAll(a.getLabelNamesList()));
    answers.forEach(a -> fresh.add(a.getFreshnessList()));
    return List.copyOf(union);
  }

  private List<String> labelValues(String tenant, ReadLevel level, Freshness fresh, String name, long mint,
      long maxt, List<Matcher> matchers) {
    List<LabelMatcher> m = Matchers.toProto(matchers);
    List<SourceCalls.Call<LabelValuesRequest>> planned = plan(tenant, mint, maxt, (from, to) -> LabelValuesRequest
        .newBuilder().setLabelName(name).setStartTimestampMs(from).setEndTimestampMs(to).addAllMatchers(m).build());
    List<LabelValuesResponse> answers = calls.all("LabelValues", tenant, level, planned,
        (stub, future, req) -> future.labelValues(req));
    TreeSet<String> union = new TreeSet<>();
    answers.forEach(a -> union.addAll(a.getLabelValuesList()));
    answers.forEach(a -> fresh.add(a.getFreshnessList()));
    return List.copyOf(union);
  }

  /**
   * {@code /api/v1/user_lag}: asks the owner of every partition (as a query would pick it) for
   * the tenant's lag, all at once within {@code querier.timeout}, falling over to the partition's
   * next owner (another zone) on a server error as queries do; lists the partitions holding the
   * tenant's series, and those no owner could answer for, with the reason. Kafka mode only.
   */
  public List<UserLag.Row> userLag(String tenant) {
    if (!sources.kafka()) {
      return List.of();
    }
    List<QuerySources.Owner> owners = sources.partitionOwnersOrProblems();
    List<SourceCalls.Call<UserLagRequest>> planned = new ArrayList<>();
    for (QuerySources.Owner o : owners) {
      if (o.target() != null) {
        planned.add(new SourceCalls.Call<>(o.target(), INGESTER, UserLagRequest.getDefaultInstance()));
      }
    }
    List<SourceCalls.Outcome<UserLagResponse>> answers = calls.each("UserLag", tenant, ReadLevel.EVENTUAL, planned,
        (stub, future, req) -> future.userLag(req));
    List<UserLag.Row> rows = new ArrayList<>();
    int next = 0;
    for (QuerySources.Owner o : owners) {
      if (o.target() == null) {
        rows.add(new UserLag.Row(o.partition(), "", null, -1, -1, o.problem()));
        continue;
      }
      SourceCalls.Outcome<UserLagResponse> a = answers.get(next++);
      UserLagResponse r = a.value();
      if (r == null) {
        RuntimeException e = a.error();
        rows.add(new UserLag.Row(o.partition(), o.target().replicas().get(0).name(), null, -1, -1,
            e == null ? "no answer" : e.getMessage()));
        continue;
      }
      if (r.getSeries() == 0) {
        continue;
      }
      for (PartitionLag p : r.getPartitionsList()) {
        rows.add(new UserLag.Row(p.getPartition(), r.getInstanceId(), QueryingIngesterService.fromProto(p),
            r.getSeries(), r.getNewestSampleMs(), null));
      }
    }
    return rows;
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
    List<MetricsMetadataResponse> answers = calls.all("MetricsMetadata", tenant, ReadLevel.EVENTUAL, planned,
        (stub, future, req) -> future.metricsMetadata(req));
    SortedMap<String, MetricMetadata> out = new TreeMap<>();
    for (MetricsMetadataResponse a : answers) {
      for (MetricMetadata m : a.getMetadataList()) {
        out.putIfAbsent(m.getMetricFamilyName(), m);
      }
    }
    return out;
  }

  /**
   * The tenant's exemplars of the series matching {@code selector} in {@code [mint, maxt]},
   * gathered like {@link #metadata} from every ingester the querier reads (one healthy owner per
   * partition in Kafka mode, with failover) and merged per series, each exemplar once.
   */
  public List<dev.weir.storage.tsdb.head.SeriesExemplars> exemplars(String tenant, long mint, long maxt,
      List<dev.weir.storage.tsdb.labels.Matcher> selector) {
    dev.weir.proto.ingester.ExemplarQueryRequest req = dev.weir.proto.ingester.ExemplarQueryRequest.newBuilder()
        .setStartTimestampMs(mint).setEndTimestampMs(maxt)
        .addMatchers(dev.weir.proto.ingester.LabelMatchers.newBuilder()
            .addAllMatchers(dev.weir.ingester.api.Matchers.toProto(selector)))
        .build();
    List<SourceCalls.Call<dev.weir.proto.ingester.ExemplarQueryRequest>> planned = new ArrayList<>();
    for (QuerySources.Target t : sources.ingesters()) {
      planned.add(new SourceCalls.Call<>(t, INGESTER, req));
    }
    List<dev.weir.proto.ingester.ExemplarQueryResponse> answers = calls.all("QueryExemplars", tenant,
        ReadLevel.EVENTUAL, planned, (stub, future, r) -> future.queryExemplars(r));
    List<List<dev.weir.storage.tsdb.head.SeriesExemplars>> parts = new ArrayList<>();
    for (dev.weir.proto.ingester.ExemplarQueryResponse a : answers) {
      parts.add(dev.weir.ingester.api.ExemplarProtos.fromResponse(a));
    }
    return dev.weir.ingester.api.ExemplarsApi.merge(parts);
  }

  /**
   * A merged series as XOR chunks (and histogram chunks for its histogram samples) of at most
   * {@link #SAMPLES_PER_CHUNK} samples.
   */
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
    if (s.histograms().length > 0) {
      for (HistogramValues.Encoded e : HistogramValues.encode(s.histogramTimestamps(), s.histograms(),
          s.histograms().length, SAMPLES_PER_CHUNK)) {
        chunks.add(new ChunkData(e.minTime(), e.maxTime(), e.bytes(), e.encoding()));
      }
      chunks.sort(java.util.Comparator.comparingLong(ChunkData::minTime)); // start time order, as remote read wants
    }
    return new SeriesChunks(s.labels(), chunks);
  }
}
