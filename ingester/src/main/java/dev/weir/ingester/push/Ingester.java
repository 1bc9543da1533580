package dev.weir.ingester.push;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.Rejection;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.wire.HistogramProtos;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import dev.weir.storage.wire.WireSeries;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntToLongFunction;
import java.util.function.IntUnaryOperator;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester: validates pushed series and appends them to the tenant's head, and answers
 * queries from it. A push stores every valid sample even when others are refused; the refused
 * ones are counted by reason and the first is reported as a {@link ClientErrorException}.
 *
 * <p>Thread-safe: pushes for the same or different tenants may run concurrently.
 */
public final class Ingester implements Service, PushHandler {
  private static final Logger log = LoggerFactory.getLogger(Ingester.class);

  private final IngesterConfig config;
  private final Tsdb tsdb;
  private final Function<String, Limits> limits;
  private final IngesterMetrics metrics;
  private final LongSupplier wallClock;
  private final RateLimitedLog clientErrorLog =
      new RateLimitedLog(log, TimeUnit.SECONDS.toNanos(1), System::nanoTime);

  /** Kafka offsets up to this one were applied before the restart (from the WAL), or -1. */
  private volatile long reReadUpTo = -1;

  public Ingester(IngesterConfig config, Tsdb tsdb, Function<String, Limits> limits,
      IngesterMetrics metrics, LongSupplier wallClock) {
    this.config = config;
    this.tsdb = tsdb;
    this.limits = limits;
    this.metrics = metrics;
    this.wallClock = wallClock;
  }

  @Override
  public String name() {
    return "ingester";
  }

  /** Opens the storage: loads blocks and replays every tenant's WAL before serving. */
  @Override
  public void start() throws Exception {
    Files.createDirectories(config.dataDir());
    log.info("msg=\"ingester starting: opening storage\" id={} data_dir={}", config.id(),
        config.dataDir().toAbsolutePath());
    tsdb.open();
    reReadUpTo = tsdb.replayReport().maxSourceOffset();
    log.info("msg=\"ingester started\" id={} tenants={}", config.id(), tsdb.tenants().size());
  }

  @Override
  public void stop() {
    tsdb.close();
    log.info("msg=\"ingester stopped\" id={}", config.id());
  }

  @Override
  public @Nullable String notReadyReason() {
    return tsdb.notReadyReason();
  }

  public Tsdb tsdb() {
    return tsdb;
  }

  public java.nio.file.Path dataDir() {
    return config.dataDir();
  }

  /**
   * Appends a write request for a tenant; returns once it is stored, and fsynced when the WAL
   * fsync mode is {@code always}.
   *
   * @throws ClientErrorException after storing the valid part, when some series or samples were
   *     refused; the message is the first error plus how many more there were
   * @throws dev.weir.storage.errors.ServerErrorException when the storage could not write it
   *     (nothing of the request is stored then; the client retries)
   */
  @Override
  public void push(String tenant, WriteRequest request) {
    push(tenant, request, tsdb.fsyncOnCommit());
  }

  /**
   * Appends a write request; {@code durable} waits for the WAL fsync (the Kafka reader passes
   * false and calls {@link Tsdb#sync()} before committing offsets instead).
   */
  public void push(String tenant, WriteRequest request, boolean durable) {
    Scope sc = begin(tenant);
    Limits l = sc.limits();
    Appender app = sc.app();
    PushErrors errors = sc.errors();
    long maxTime = sc.maxTime();
    for (TimeSeries ts : request.getTimeseriesList()) {
      Labels labels;
      try {
        labels = Validator.labels(ts, l);
      } catch (ClientErrorException e) {
        errors.addSeries(e.reason(), ts.getSamplesCount(), ts.getHistogramsCount(), e.getMessage());
        continue;
      }
      MemSeries created = appendSeries(app, null, labels, null, 0, ts.getSamplesCount(),
          i -> ts.getSamples(i).getTimestamp(), i -> ts.getSamples(i).getValue(), maxTime, sc.fresh(), errors);
      if (ts.getHistogramsCount() > 0) {
        appendHistograms(app, created, labels, new ProtoHistograms(ts), l, maxTime, errors);
      }
      if (ts.getExemplarsCount() > 0) {
        appendExemplars(sc, created, labels, ts.getExemplarsCount(), i -> wireExemplar(ts.getExemplars(i)));
      }
    }
    finish(tenant, sc, app.commit(durable), request.getMetadataList(), errors, false, durable);
  }

  @Override
  public void push(String tenant, WireBatch batch) {
    push(tenant, batch, tsdb.fsyncOnCommit());
  }

  /**
   * {@link #push(String, WriteRequest, boolean)} for series still in their protobuf bytes, with
   * the same checks and results. A series that already exists is found by its label bytes
   * ({@link WireSeries#key()}): no String or label object is built for it. Its labels passed
   * every check when it was created, so only the limits that may have been lowered since (label
   * count and lengths) are checked again; new series, non-ASCII or unsorted labels take the
   * full validation.
   */
  public void push(String tenant, WireBatch batch, boolean durable) {
    push(tenant, batch, durable, -1);
  }

  /**
   * The same, recording in the WAL that these samples came from Kafka offset {@code sourceOffset}
   * (-1: none), so that a WAL repair can say from which offset to consume them again.
   */
  public void push(String tenant, WireBatch batch, boolean durable, long sourceOffset) {
    push(tenant, batch, durable, sourceOffset, -1);
  }

  /**
   * The same, validating against {@code nowMillis} instead of the wall clock when it is not
   * negative: the Kafka reader passes the records' timestamp (their produce time), so a sample is
   * judged "too far in the future" as it was when written, however late it is consumed.
   */
  public void push(String tenant, WireBatch batch, boolean durable, long sourceOffset, long nowMillis) {
    WireSeries ws = CURSOR.get();
    try {
      push(tenant, batch, durable, sourceOffset, nowMillis, ws);
    } finally {
      ws.release(); // the thread's cursor keeps no request's (or Kafka record's) bytes alive
    }
  }

  private void push(String tenant, WireBatch batch, boolean durable, long sourceOffset, long nowMillis,
      WireSeries ws) {
    // A Kafka record the WAL had applied before a restart (its refusals count as duplicates).
    boolean reRead = sourceOffset >= 0 && sourceOffset <= reReadUpTo;
    Scope sc = begin(tenant, nowMillis < 0 ? wallClock.getAsLong() : nowMillis, reRead);
    try {
      push(tenant, batch, durable, sourceOffset, ws, sc);
    } finally {
      sc.app().release(); // a request refused whole gives the thread's batch arrays back (a commit did)
    }
  }

  private void push(String tenant, WireBatch batch, boolean durable, long sourceOffset, WireSeries ws, Scope sc) {
    Limits l = sc.limits();
    Appender app = sc.app();
    PushErrors errors = sc.errors();
    long maxTime = sc.maxTime();
    // One pair of accessors for the whole batch (the cursor is the same object for every series).
    IntToLongFunction timestamps = ws::timestamp;
    IntToDoubleFunction values = ws::value;
    app.reserve((int) Math.min(Integer.MAX_VALUE - 8, batch.samples()));
    IntUnaryOperator hashes = batch.hashed() ? batch::hash : null;
    for (int k = 0; k < batch.size(); k++) {
      if (hashes != null && k % WARM_AHEAD == 0) {
        // Series lookups wait on memory (the head's table, series and labels are scattered):
        // touching this block's 64 first, in independent loads, makes their misses overlap.
        app.warmLookups(hashes, k, Math.min(batch.size(), k + WARM_AHEAD));
      }
      try {
        batch.read(k, ws);
      } catch (WireFormatException e) {
        // A scanned batch is checked as it is read: refuse it whole, before the commit.
        throw new ClientErrorException("bad_data", "the request is not a valid remote write request"
            + " (prometheus.WriteRequest): series " + k + ": " + e.getMessage());
      }
      if (ws.isV2() && ws.samples() == 0 && ws.histograms() == 0
          && (ws.exemplars() == 0 || l.maxGlobalExemplarsPerUser() == 0)) {
        continue; // a 2.0 series carrying only metadata (the batch's metadata holds it) or unstored exemplars
      }
      MemSeries series = null;
      boolean keyed = ws.hasKey() && ws.labelCount() <= l.maxLabelNamesPerSeries()
          && ws.maxNameLength() <= l.maxLabelNameLength() && ws.maxValueLength() <= l.maxLabelValueLength();
      if (keyed) {
        series = app.existing(ws.key());
      }
      // A found series keeps only its labels' bytes: they are decoded only when needed (histograms,
      // exemplars, an error message), not for every pushed series.
      @Nullable Labels labels = null;
      byte @Nullable [] canonical = null;
      if (series == null && keyed && !ws.isV2() && ws.histograms() == 0 && ws.exemplars() == 0
          && !ws.hasEmptyValue() && ws.hasLegacyValidNames()) {
        // A new series whose labels pass every check on their bytes (as the distributor's asSent):
        // created from its canonical encoding, without a String per label.
        canonical = ws.canonicalLabels();
      }
      if (series == null && canonical == null) {
        String[] pairs;
        try {
          pairs = ws.pairs();
        } catch (WireFormatException e) {
          throw new ClientErrorException("bad_data", "the request is not a valid remote write request"
              + " (prometheus.WriteRequest): series " + k + ": " + e.getMessage());
        }
        try {
          labels = Validator.labels(pairs, l);
        } catch (ClientErrorException e) {
          errors.addSeries(e.reason(), ws.samples(), ws.histograms(), e.getMessage());
          continue;
        }
      }
      MemSeries created = appendSeries(app, series, labels, canonical, canonical == null ? 0 : ws.labelsHash(),
          ws.samples(), timestamps, values, maxTime, sc.fresh(), errors);
      if (labels == null && (ws.histograms() > 0 || ws.exemplars() > 0)) {
        labels = series.labels();
      }
      if (ws.histograms() > 0) {
        try {
          appendHistograms(app, created, labels, new WireHistograms(ws), l, maxTime, errors);
        } catch (WireFormatException e) {
          // Neither scan nor parse reads inside a histogram: a malformed one shows up here.
          // Refused whole, before the commit, as a client error (not a 5xx the sender retries).
          throw new ClientErrorException("bad_data", "the request is not a valid remote write request"
              + " (prometheus.WriteRequest): series " + k + ": a histogram is malformed: " + e.getMessage());
        }
      }
      if (ws.exemplars() > 0) {
        try {
          appendExemplars(sc, created, labels, ws.exemplars(), ws::exemplar);
        } catch (WireFormatException e) {
          errors.exemplars("bad_data", ws.exemplars(), "an exemplar is not valid: " + e.getMessage() + ", series: '"
              + Validator.seriesText(labels) + "'");
        }
      }
    }
    if (sourceOffset >= 0) {
      app.source(sourceOffset);
    }
    finish(tenant, sc, app.commit(durable), batch.metadata(), errors, sc.fresh().reRead, durable);
  }

  /**
   * What one push works with: the tenant's limits and head, an appender, its errors, the newest
   * time allowed, and what a new series' samples are checked against before it is created.
   */
  private record Scope(Limits limits, TenantHead head, Appender app, PushErrors errors, long maxTime,
      NewSeriesCheck fresh) {}

  /**
   * The samples of series that do not exist yet which the head would refuse at the commit
   * ({@link TenantHead#newSeriesBound}): they are refused before the series is created, for the
   * same reason and with the same message, reported after the commit's refusals (as if the
   * commit had refused them last). In a Kafka record read again after a restart ({@code reRead})
   * they count as duplicates, as the commit's refusals do.
   */
  private static final class NewSeriesCheck {
    final TenantHead.NewSeriesBound bound;
    final boolean reRead;
    int reReadRefused;
    private final List<Refused> refused = new java.util.ArrayList<>(0);

    /** A float sample of series {@code labels} refused before its creation. */
    private record Refused(Labels labels, long t, double v) {}

    NewSeriesCheck(TenantHead.NewSeriesBound bound, boolean reRead) {
      this.bound = bound;
      this.reRead = reRead;
    }

    /** A sample of series {@code labels} refused before its creation, reported by {@link #report}. */
    void refused(Labels labels, long t, double v) {
      refused.add(new Refused(labels, t, v));
    }

    /** Adds the refused samples to the request's errors, one by one, as the commit's refusals are. */
    void report(PushErrors errors) {
      for (Refused r : refused) {
        errors.add(bound.reason().id(), 1, Rejection.message(bound.reason(), r.t(), r.v(), false, r.labels()));
      }
    }
  }

  private Scope begin(String tenant) {
    return begin(tenant, wallClock.getAsLong(), false);
  }

  private Scope begin(String tenant, long nowMillis, boolean reRead) {
    Limits l = limits.apply(tenant);
    TenantHead head = tsdb.head(tenant);
    metrics.tenantHead(head);
    return new Scope(l, head, head.appender(), new PushErrors(tenant, metrics, clientErrorLog),
        nowMillis + l.creationGracePeriod().toMillis(), new NewSeriesCheck(head.newSeriesBound(), reRead));
  }

  private static WireSeries.WireExemplar wireExemplar(dev.weir.proto.prompb.Exemplar e) {
    return ExemplarValidator.of(e);
  }

  /**
   * Validates a series' exemplars ({@link ExemplarValidator}) and adds the valid ones to the
   * appender; the series is created for them when the request brought it no sample (Prometheus
   * sends exemplars in series entries of their own). Nothing is stored when the tenant's exemplar
   * limit is 0 (as Mimir's distributor drops them).
   */
  private static void appendExemplars(Scope sc, @Nullable MemSeries known, Labels labels, int n,
      java.util.function.IntFunction<WireSeries.WireExemplar> get) {
    if (sc.limits().maxGlobalExemplarsPerUser() == 0) {
      return;
    }
    MemSeries series = known;
    long minTime = sc.head().minValidTime();
    for (int i = 0; i < n; i++) {
      dev.weir.storage.tsdb.head.Exemplar e;
      try {
        e = ExemplarValidator.check(get.apply(i), labels, minTime, sc.maxTime());
      } catch (ClientErrorException ex) {
        sc.errors().exemplars(ex.reason(), 1, ex.getMessage());
        continue;
      }
      if (series == null) {
        try {
          series = sc.app().series(labels);
        } catch (ClientErrorException ex) {
          sc.errors().exemplars(ex.reason(), n - i, ex.getMessage());
          return;
        }
      }
      sc.app().exemplar(series, e);
    }
  }

  /**
   * Adds one validated series' float samples to the appender: samples too far in the future are
   * refused, and the series is created (when {@code known} is null) at its first acceptable
   * sample, so a series whose samples are all refused is not created: from {@code canonical}, its
   * labels' canonical encoding with their hash {@code hash}, when given, else from {@code labels}.
   * Until it exists, samples the head would refuse as too old ({@code fresh}) are refused here.
   *
   * @return the series, or null when it was not known and none of its samples was acceptable
   */
  private static @Nullable MemSeries appendSeries(Appender app, @Nullable MemSeries known, @Nullable Labels labels,
      byte @Nullable [] canonical, int hash, int samples, IntToLongFunction timestamp, IntToDoubleFunction value,
      long maxTime, NewSeriesCheck fresh, PushErrors errors) {
    MemSeries series = known;
    String text = null; // the series in messages, decoded once at the first refusal
    Labels decoded = null;
    for (int i = 0; i < samples; i++) {
      long t = timestamp.applyAsLong(i);
      if (t > maxTime) {
        if (text == null) {
          text = Validator.seriesText(canonical != null ? Labels.fromWireEncoding(canonical, hash)
              : labelsOf(known, labels));
        }
        errors.add("sample_too_far_in_future", 1, "received a sample whose timestamp is too far in the"
            + " future, timestamp: " + t + ", series: '" + text + "'");
        continue;
      }
      // Only a series that does not exist is refused here: one made from canonical bytes was
      // looked up by them and not found; one from decoded labels (the decoded path, or labels the
      // bytes path could not key) is looked up now, on this rare branch. The samples of an
      // existing series go to the commit, which may find them duplicates.
      if (series == null && t < fresh.bound.below()
          && (canonical != null || (series = app.existing(labelsOf(known, labels))) == null)) {
        if (fresh.reRead) {
          fresh.reReadRefused++;
        } else {
          if (decoded == null) {
            decoded = canonical != null ? Labels.fromWireEncoding(canonical, hash) : labelsOf(known, labels);
          }
          fresh.refused(decoded, t, value.applyAsDouble(i));
        }
        continue;
      }
      if (series == null) {
        try {
          series = canonical != null ? app.series(canonical, hash) : app.series(labelsOf(known, labels));
        } catch (ClientErrorException e) {
          errors.add(e.reason(), samples - i, e.getMessage());
          break;
        }
      }
      app.add(series, t, value.applyAsDouble(i));
    }
    return series;
  }

  /** The labels of a push's series: given when it was not found, else decoded from the found one. */
  private static Labels labelsOf(@Nullable MemSeries known, @Nullable Labels labels) {
    if (labels != null) {
      return labels;
    }
    if (known == null) {
      throw new IllegalArgumentException("neither labels nor a series");
    }
    return known.labels();
  }

  /**
   * Adds one validated series' native histogram samples, each admitted by
   * {@link HistogramAdmission} (consistent, not in the future, within the bucket limit, reduced
   * if allowed), creating the series at the first acceptable one when {@code known} is null.
   */
  private static void appendHistograms(Appender app, @Nullable MemSeries known, Labels labels,
      SeriesHistograms hs, Limits l, long maxTime, PushErrors errors) {
    String text = Validator.seriesText(labels);
    if (!l.nativeHistogramsIngestionEnabled()) {
      HistogramAdmission.refuseDisabled(hs.count(), text, errors);
      return;
    }
    MemSeries series = known;
    for (int i = 0; i < hs.count(); i++) {
      long t = hs.timestamp(i);
      dev.weir.storage.wire.InvalidSeriesException problem = hs.problem(i);
      NativeHistogram h = HistogramAdmission.admit(problem == null ? hs.histogram(i) : null, problem, t, maxTime, l,
          text, errors);
      if (h == null) {
        continue;
      }
      if (series == null) {
        try {
          series = app.series(labels);
        } catch (ClientErrorException e) {
          errors.addHistograms(e.reason(), hs.count() - i, e.getMessage());
          return;
        }
      }
      app.addHistogram(series, t, h);
    }
  }

  /** The histograms of one series, from its bytes or its protobuf object. */
  private interface SeriesHistograms {
    int count();

    dev.weir.storage.wire.@Nullable InvalidSeriesException problem(int i);

    long timestamp(int i);

    NativeHistogram histogram(int i);
  }

  private record WireHistograms(WireSeries ws) implements SeriesHistograms {
    @Override
    public int count() {
      return ws.histograms();
    }

    @Override
    public dev.weir.storage.wire.@Nullable InvalidSeriesException problem(int i) {
      return ws.histogramProblem(i);
    }

    @Override
    public long timestamp(int i) {
      return ws.histogramTimestamp(i);
    }

    @Override
    public NativeHistogram histogram(int i) {
      return ws.histogram(i);
    }
  }

  private record ProtoHistograms(TimeSeries ts) implements SeriesHistograms {
    @Override
    public int count() {
      return ts.getHistogramsCount();
    }

    @Override
    public dev.weir.storage.wire.@Nullable InvalidSeriesException problem(int i) {
      return HistogramProtos.fromProto(ts.getHistograms(i)).problem();
    }

    @Override
    public long timestamp(int i) {
      return ts.getHistograms(i).getTimestamp();
    }

    @Override
    public NativeHistogram histogram(int i) {
      NativeHistogram h = HistogramProtos.fromProto(ts.getHistograms(i)).histogram();
      if (h == null) {
        throw new IllegalStateException("histogram " + i + " has a problem: check problem() first");
      }
      return h;
    }
  }

  private static final ThreadLocal<WireSeries> CURSOR = ThreadLocal.withInitial(WireSeries::new);
  /** Series per block whose lookups are warmed together (see {@link Appender#warmLookups}). */
  static final int WARM_AHEAD = 64;

  /**
   * Counts and reports what a commit refused. {@code reRead}: the batch came from a Kafka record
   * the WAL had applied before a restart, so the head's refusals (out of order, out of bounds,
   * duplicate timestamp: its samples are in the head or already in a block) were counted when it
   * was first read; they count as duplicates now.
   */
  private void finish(String tenant, Scope sc, CommitResult r, List<dev.weir.proto.prompb.MetricMetadata> meta,
      PushErrors errors, boolean reRead, boolean durable) {
    if (!meta.isEmpty()) {
      sc.head().metadata().commit(meta, durable);
    }
    var ex = sc.app().exemplarResult();
    if (ex != null) {
      metrics.ingestedExemplars(tenant, ex.added());
      // A duplicate is already stored: written, as Prometheus' appender reports it.
      ExemplarsWritten.record(ex.added() + ex.duplicates());
      if (ex.outOfOrder() > 0 && !reRead) {
        errors.exemplars("exemplar_out_of_order", ex.outOfOrder(), "received " + ex.outOfOrder() + " out-of-order"
            + " exemplar(s): an exemplar must be newer than its series' newest one, series: '"
            + (ex.firstOutOfOrder() == null ? "" : Validator.seriesText(ex.firstOutOfOrder())) + "'");
      }
    }
    int reReadRejections = 0;
    for (Rejection rej : r.rejections()) {
      if (reRead) {
        reReadRejections++;
      } else if (rej.histogram()) {
        errors.addHistograms(rej.reason().id(), 1, rej.message());
      } else {
        errors.add(rej.reason().id(), 1, rej.message());
      }
    }
    sc.fresh().report(errors);
    metrics.ingested(tenant, r.appended());
    metrics.outOfOrder(tenant, r.outOfOrder());
    metrics.duplicates(tenant, r.duplicates() + reReadRejections + sc.fresh().reReadRefused);
    errors.throwIfAny();
  }

  /** The tenant's metric metadata by family name, sorted. */
  public java.util.SortedMap<String, dev.weir.proto.prompb.MetricMetadata> metadata(String tenant) {
    TenantDb db = tsdb.existing(tenant);
    return db == null ? java.util.Collections.emptySortedMap() : db.head().metadata().all();
  }

  /** Exemplars in {@code [mint, maxt]} of the series matching all matchers, in label order. */
  public List<dev.weir.storage.tsdb.head.SeriesExemplars> exemplars(String tenant, long mint, long maxt,
      List<Matcher> matchers) {
    TenantDb db = tsdb.existing(tenant);
    return db == null ? List.of() : db.head().exemplars().select(mint, maxt, matchers);
  }

  /** Series matching all matchers with chunks overlapping {@code [mint, maxt]}, sorted. */
  public List<SeriesChunks> select(String tenant, long mint, long maxt, List<Matcher> matchers) {
    TenantDb db = tsdb.existing(tenant);
    return db == null ? List.of() : db.select(mint, maxt, matchers);
  }

  public List<String> labelNames(String tenant, long mint, long maxt, List<Matcher> matchers) {
    TenantDb db = tsdb.existing(tenant);
    return db == null ? List.of() : db.labelNames(mint, maxt, matchers);
  }

  public List<String> labelValues(String tenant, String name, long mint, long maxt, List<Matcher> matchers) {
    TenantDb db = tsdb.existing(tenant);
    return db == null ? List.of() : db.labelValues(name, mint, maxt, matchers);
  }
}
