package dev.weir.ingester.push;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.TenantDb;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.CommitResult;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.Rejection;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.head.TenantHead;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
  /** Tenant → metric family → latest metadata (kept in memory; Prometheus resends it every minute). */
  private final java.util.concurrent.ConcurrentHashMap<String,
      java.util.concurrent.ConcurrentSkipListMap<String, dev.weir.proto.prompb.MetricMetadata>> metadata =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final RateLimitedLog clientErrorLog =
      new RateLimitedLog(log, TimeUnit.SECONDS.toNanos(1), System::nanoTime);

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
    Limits l = limits.apply(tenant);
    TenantHead head = tsdb.head(tenant);
    metrics.tenantHead(head);
    Appender app = head.appender();
    PushErrors errors = new PushErrors(tenant, metrics, clientErrorLog);
    long maxTime = wallClock.getAsLong() + l.creationGracePeriod().toMillis();
    for (TimeSeries ts : request.getTimeseriesList()) {
      Labels labels;
      try {
        labels = Validator.labels(ts, l);
      } catch (ClientErrorException e) {
        errors.add(e.reason(), ts.getSamplesCount() + ts.getHistogramsCount(), e.getMessage());
        continue;
      }
      if (ts.getHistogramsCount() > 0) {
        errors.add("native_histogram_unsupported", ts.getHistogramsCount(),
            "native histogram samples are not supported yet, series: '" + Validator.seriesText(labels) + "'");
      }
      MemSeries series = null;
      for (int i = 0; i < ts.getSamplesCount(); i++) {
        Sample s = ts.getSamples(i);
        if (s.getTimestamp() > maxTime) {
          errors.add("sample_too_far_in_future", 1, "received a sample whose timestamp is too far in the"
              + " future, timestamp: " + s.getTimestamp() + ", series: '" + Validator.seriesText(labels) + "'");
          continue;
        }
        if (series == null) {
          try {
            series = app.series(labels);
          } catch (ClientErrorException e) {
            errors.add(e.reason(), ts.getSamplesCount() - i, e.getMessage());
            break;
          }
        }
        app.add(series, s.getTimestamp(), s.getValue());
      }
    }
    CommitResult r = app.commit(durable);
    if (request.getMetadataCount() > 0) {
      var byFamily = metadata.computeIfAbsent(tenant, t -> new java.util.concurrent.ConcurrentSkipListMap<>());
      for (dev.weir.proto.prompb.MetricMetadata m : request.getMetadataList()) {
        if (!m.getMetricFamilyName().isEmpty()) {
          byFamily.put(m.getMetricFamilyName(), m);
        }
      }
    }
    for (Rejection rej : r.rejections()) {
      errors.add(rej.reason().id(), 1, rej.message());
    }
    metrics.ingested(tenant, r.appended());
    metrics.duplicates(tenant, r.duplicates());
    errors.throwIfAny();
  }

  /** The tenant's metric metadata by family name, sorted. */
  public java.util.SortedMap<String, dev.weir.proto.prompb.MetricMetadata> metadata(String tenant) {
    var m = metadata.get(tenant);
    return m == null ? java.util.Collections.emptySortedMap() : m;
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
