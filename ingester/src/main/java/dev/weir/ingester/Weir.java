package dev.weir.ingester;

import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.blockbuilder.BlockBuilderService;
import dev.weir.ingester.api.JsonImport;
import dev.weir.ingester.api.ExemplarsApi;
import dev.weir.ingester.api.MetadataApi;
import dev.weir.ingester.api.RemoteReadApi;
import dev.weir.ingester.api.OtlpApi;
import dev.weir.ingester.api.RemoteWriteApi;
import dev.weir.ingester.api.PrometheusHttpApi;
import dev.weir.ingester.api.QueryFreshness;
import dev.weir.ingester.api.UserLag;
import dev.weir.ingester.api.ReadSource;
import dev.weir.ingester.compactor.CompactorService;
import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.config.WeirConfig;
import dev.weir.ingester.distributor.ForwardingDistributor;
import dev.weir.ingester.distributor.KafkaDistributor;
import dev.weir.ingester.ingest.BlockBuilderBacklog;
import dev.weir.ingester.ingest.DownscaleReadiness;
import dev.weir.ingester.ingest.IngestStorageConfig;
import dev.weir.ingester.ingest.KafkaWriterService;
import dev.weir.ingester.ingest.PartitionLags;
import dev.weir.ingester.ingest.PartitionReaderService;
import dev.weir.ingester.ingest.PartitionRingService;
import dev.weir.ingester.ingest.PrepareDownscaleApi;
import dev.weir.ingester.ingest.ReadConsistency;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.ingest.UserLagMetrics;
import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.lifecycle.ServiceManager;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.IngestionRateStrategy;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.SeriesLimit;
import dev.weir.ingester.push.PushHandler;
import dev.weir.ingester.push.RateLimitedPush;
import dev.weir.ingester.push.RuntimeConfig;
import dev.weir.ingester.querier.Querier;
import dev.weir.ingester.querier.QuerierMetrics;
import dev.weir.ingester.querier.QueryLimits;
import dev.weir.ingester.querier.QuerySources;
import dev.weir.ingester.ring.InstanceRingService;
import dev.weir.ingester.ring.KvService;
import dev.weir.ingester.ring.RingConfig;
import dev.weir.ingester.ring.RingPages;
import dev.weir.ingester.shipper.ShipperService;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.HttpServer;
import dev.weir.ingester.server.OpsEndpoints;
import dev.weir.ingester.server.RequestMetrics;
import dev.weir.ingester.storegateway.StoreGatewayGrpcService;
import dev.weir.ingester.storegateway.StoreGatewayService;
import dev.weir.ring.kv.KvMetrics;
import dev.weir.ring.lifecycle.RingMetrics;
import dev.weir.ring.partition.PartitionIds;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.ingest.ReaderMetrics;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A Weir process: the components of its target wired together and run by a
 * {@link ServiceManager} (started in order, stopped in reverse). Targets and modes:
 *
 * <pre>
 *            classic mode                          Kafka mode (--ingest-storage.enabled)
 * all        push → ingester; queries              push → Kafka; ingester consumes its partition
 * ingester   push → ingester; queries              ingester consumes its partition; Push refused*
 *            (both: blocks shipped to the bucket every --blocks-storage.tsdb.ship-interval; 0 = never)
 * distributor push → owning ingester (gRPC)        push → Kafka
 * block-builder (not available)                    partitions → blocks in the bucket
 * store-gateway the bucket's blocks → queries (gRPC)  the same
 * querier    reads every ingester + store-gateways  reads one owner per partition + store-gateways
 * compactor  bucket retention: marks, then deletes blocks past --compactor.blocks-retention-period
 * </pre>
 *
 * (*unless {@code --ingester.push-grpc-method-enabled=true}). Usage:
 *
 * <pre>{@code
 * Weir weir = Weir.create(config, flags);
 * weir.start();
 * weir.stop();
 * }</pre>
 *
 * <p>Thread-safe: {@link #stop()} may come from a shutdown hook.
 */
public final class Weir {
  private final PrometheusMeterRegistry registry;
  private final ServiceManager services;
  private final @Nullable Ingester ingester;
  private final @Nullable GrpcServer grpc;
  private final HttpServer http;
  private final JvmGcMetrics gcMetrics;
  private final List<AutoCloseable> closeables;

  private Weir(PrometheusMeterRegistry registry, ServiceManager services, @Nullable Ingester ingester,
      @Nullable GrpcServer grpc,
      HttpServer http, JvmGcMetrics gcMetrics, List<AutoCloseable> closeables) {
    this.registry = registry;
    this.services = services;
    this.ingester = ingester;
    this.grpc = grpc;
    this.http = http;
    this.gcMetrics = gcMetrics;
    this.closeables = closeables;
  }

  /**
   * Wires the components of {@code config.target()}; nothing runs until {@link #start()}.
   *
   * @throws ConfigException when the configuration cannot work for this target (e.g. a Kafka-mode
   *     ingester ID without a partition number)
   */
  public static Weir create(WeirConfig config, FlagSet flags) throws ConfigException {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    LongSupplier clock = System::currentTimeMillis;

    String target = config.target();
    boolean kafka = config.ingest().enabled();
    if (target.equals("block-builder")) {
      return createBlockBuilder(config, flags, registry, gc);
    }
    if (target.equals("store-gateway")) {
      return createStoreGateway(config, flags, registry, gc, clock);
    }
    if (target.equals("compactor")) {
      return createCompactor(config, flags, registry, gc, clock);
    }
    if (target.equals("querier")) {
      return createQuerier(config, flags, registry, gc, clock);
    }
    boolean runsIngester = !target.equals("distributor");
    boolean runsDistributor = !target.equals("ingester");
    String id = config.ingester().id();
    int partition = -1;
    if (kafka && runsIngester) {
      try {
        partition = PartitionIds.fromInstanceId(id);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage());
      }
    }

    RequestMetrics requestMetrics = new RequestMetrics(registry);
    IngesterMetrics ingesterMetrics = new IngesterMetrics(registry, clock,
        config.ingester().activeSeriesIdleTimeout().toMillis());
    List<Service> list = new ArrayList<>();
    List<AutoCloseable> closeables = new ArrayList<>();
    RuntimeConfig limits = new RuntimeConfig(config.runtimeConfig().file(), config.runtimeConfig().period(),
        config.limits(), registry);
    list.add(limits);
    KvService kv = new KvService(config.ring().kv(), new KvMetrics(registry));
    list.add(kv);
    AtomicReference<InstanceRingService> ringRef = new AtomicReference<>();

    Ingester ingester = null;
    ShipperService shipper = null;
    ProgressBoard progress = new ProgressBoard(config.log().progressInterval(), System::nanoTime);
    if (runsIngester) {
      Tsdb tsdb = new Tsdb(config.storage(), new TsdbMetrics(registry), clock, tenant -> () -> {
        Limits l = limits.apply(tenant);
        if (!kafka || l.maxGlobalSeriesPerUser() == 0) {
          return l.maxGlobalSeriesPerUser();
        }
        // Mimir's rule in ingest-storage mode: the global limit is shared by the tenant's partitions.
        InstanceRingService r = ringRef.get();
        return SeriesLimit.perPartition(l, r == null ? null : r.partitionRing());
      });
      tsdb.progressBoard(progress);
      tsdb.earlyCompaction(config.earlyCompaction());
      tsdb.exemplarLimits(tenant -> () -> {
        Limits l = limits.apply(tenant);
        InstanceRingService r = ringRef.get();
        return !kafka ? l.maxGlobalExemplarsPerUser()
            : SeriesLimit.perPartition(l.maxGlobalExemplarsPerUser(), l, r == null ? null : r.partitionRing());
      });
      tsdb.outOfOrderWindows(tenant -> () -> limits.apply(tenant).outOfOrderTimeWindow().toMillis());
      ingester = new Ingester(config.ingester(), tsdb, limits, ingesterMetrics, clock);
      list.add(ingester);
      if (config.shipper().enabled()) {
        // Right after the storage: started once it is open, stopped before it closes.
        shipper = ShipperService.wire(config.shipper(), config.bucket(), tsdb, registry, clock);
        list.add(shipper);
      }
    }
    RingMetrics ringMetrics = new RingMetrics(registry);
    PartitionRingService partitionRing = null;
    if (kafka && runsIngester) {
      partitionRing = new PartitionRingService(partition, id, config.ingest(), config.ring(), kv, ringMetrics, clock);
      list.add(partitionRing);
    }
    KafkaWriterService writer = null;
    if (kafka && runsDistributor) {
      writer = new KafkaWriterService(config.ingest().kafka(), new WriterMetrics(registry));
      list.add(writer);
    }

    PushHandler push;
    if (kafka && runsDistributor) {
      KafkaWriterService w = writer;
      push = new KafkaDistributor(limits, () -> ringRef.get().partitionRing(), w::writer, ingesterMetrics, clock);
    } else if (!kafka && target.equals("distributor")) {
      ForwardingDistributor fwd = new ForwardingDistributor(limits, () -> ringRef.get().instanceRing(),
          ingesterMetrics, clock);
      closeables.add(fwd);
      push = fwd;
    } else if (kafka && !config.ingest().pushGrpcEnabled()) {
      push = (tenant, req) -> {
        throw new ClientErrorException("push_disabled", "this ingester consumes Kafka partition " + id
            + ": write to a distributor (or enable --ingester.push-grpc-method-enabled)", 400);
      };
    } else {
      push = ingester;
    }
    AtomicReference<InstanceRingService> distributorRingRef = new AtomicReference<>();
    if (runsDistributor) {
      // Rate limits apply where writes enter the system (Mimir's distributors), not again behind them.
      IngestionRateStrategy strategy = IngestionRateStrategy.local();
      if (config.distributor().global()) {
        strategy = IngestionRateStrategy.global(() -> distributorRingRef.get().instanceRing().healthyActiveInstances());
      }
      push = new RateLimitedPush(push, limits, ingesterMetrics, System::nanoTime, strategy);
    }

    AtomicReference<ReadConsistency> consistency = new AtomicReference<>(ReadConsistency.IMMEDIATE);
    ReadConsistency current = new ReadConsistency() {
      @Override
      public void await(ReadLevel level) {
        consistency.get().await(level);
      }

      @Override
      public List<PartitionFreshness> freshness() {
        return consistency.get().freshness();
      }
    };
    GrpcServer grpc = new GrpcServer(config.server(),
        List.of(new IngesterGrpcService(push, ingester, current, config.api(), id)),
        List.of(GrpcInterceptors.tenant(config.tenants()), GrpcInterceptors.metrics(requestMetrics)), requestMetrics);
    list.add(grpc);

    InstanceRingService ring = new InstanceRingService(config.ring(), kv, id, grpc::port, ringMetrics, clock,
        runsIngester, !kafka);
    ringRef.set(ring);
    InstanceRingService distributorRing = null;
    if (runsDistributor && config.distributor().global()) {
      distributorRing = InstanceRingService.distributors(config.distributor().ring(config.ring()), kv, id, grpc::port,
          ringMetrics, clock);
      distributorRingRef.set(distributorRing);
      Gauge.builder("weir.distributor.ring.healthy.instances", distributorRing,
              r -> r.instanceRing().healthyActiveInstances())
          .description("Healthy ACTIVE distributors in the distributor ring as this one sees them: with the global"
              + " rate-limit strategy each tenant's ingestion_rate is divided by this (0: not known, the whole limit).")
          .register(registry);
    }

    HttpRouter router = new HttpRouter();
    if (ingester != null) {
      ReadSource local = ReadSource.of(ingester, current);
      QueryFreshness fresh = queryFreshness(config, clock);
      new PrometheusHttpApi(local, config.tenants(), fresh).register(router);
      new RemoteReadApi(local, config.tenants(), config.api(), fresh).register(router);
      new UserLag(UserLag.local(ingester, current, id), config.tenants(), clock).register(router);
      new MetadataApi(ingester::metadata, config.tenants()).register(router);
      new ExemplarsApi(ingester::exemplars, config.tenants()).register(router);
    }
    new JsonImport(push, config.tenants()).register(router);
    new RemoteWriteApi(push, config.tenants(), config.api(), ingesterMetrics).register(router);
    new OtlpApi(push, config.tenants(), config.api(), config.otlp(), ingesterMetrics).register(router);
    ReaderMetrics readerMetrics = null;
    RingPages.PartitionLag lag = RingPages.PartitionLag.UNKNOWN;
    if (kafka) {
      // Every partition's lag from Kafka (owners' committed offsets), at most one round per interval.
      PartitionLags fromKafka = PartitionLags.of(config.ingest(), () -> ringRef.get().partitionRing(), clock);
      closeables.add(fromKafka);
      lag = fromKafka;
    }
    if (kafka && ingester != null) {
      ReaderMetrics own = new ReaderMetrics(registry, partition);
      int ownPartition = partition;
      RingPages.PartitionLag others = lag;
      // Its own partition's lag the reader knows live.
      lag = p -> p == ownPartition ? own.lagRecords() : others.records(p);
      readerMetrics = own;
    }
    RingPages.register(router, ring::instanceRing, ring::partitionRing, ring::kvConnected, lag, progress::snapshots);
    if (distributorRing != null) {
      RingPages.registerDistributors(router, distributorRing::instanceRing, distributorRing::kvConnected);
    }
    if (partitionRing != null && ingester != null) {
      PrepareDownscaleApi downscale = new PrepareDownscaleApi(partitionRing, config.querier().queryIngestersWithin(),
          DownscaleReadiness.storageOf(shipper, ingester.tsdb(), new BlockBuilderBacklog(config.ingest().kafka(),
              config.blockBuilder().consumerGroup(), partition)), clock, ingester.tsdb()::flushAll);
      downscale.register(router);
      partitionRing.reportReadyToLeave(downscale::readyToLeave);
    }
    HttpServer http = new HttpServer(config.server(), router, requestMetrics);
    list.add(http);
    list.add(ring);
    if (distributorRing != null) {
      list.add(distributorRing);
    }

    if (readerMetrics != null && ingester != null) {
      IngestStorageConfig ingest = config.ingest();
      PartitionReaderService reader = new PartitionReaderService(ingest.kafkaFor(id), partition, ingester,
          readerMetrics, clock, ingest.strongReadTimeout(),
          config.server().gracefulShutdownTimeout(), ring::activate, progress);
      reader.reader().autoIncreasePartitions(ingest.autoIncreasePartitions());
      if (partitionRing != null) {
        // Distributors write only to ACTIVE partitions: never let one the topic lacks turn ACTIVE.
        partitionRing.activateOnlyWhen(reader.reader()::partitionExists);
        reader.reader().onPartitionFound(partitionRing::reconcileSoon);
      }
      consistency.set(reader);
      list.add(reader);
      if (ingest.userLagMetricsEnabled()) {
        list.add(new UserLagMetrics(registry, ingester.tsdb(), reader::freshness, ingest.userLagMetricsMaxTenants(),
            clock));
      }
    }

    ServiceManager services = new ServiceManager(list);
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, ingester, grpc, http, gc, closeables);
  }

  /** The block-builder target: the batching consumer and the HTTP operations endpoints, nothing else. */
  private static Weir createBlockBuilder(WeirConfig config, FlagSet flags, PrometheusMeterRegistry registry,
      JvmGcMetrics gc) throws ConfigException {
    if (!config.ingest().enabled()) {
      throw new ConfigException("--target=block-builder consumes the ingest topic: it needs"
          + " --ingest-storage.enabled=true and --ingest-storage.kafka.address");
    }
    List<Integer> partitions = config.blockBuilder().partitions();
    if (partitions.isEmpty()) {
      try {
        partitions = List.of(PartitionIds.fromInstanceId(config.ingester().id()));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(e.getMessage() + " (or list them with --block-builder.partitions)");
      }
    }
    BlockBuilderService builder = new BlockBuilderService(config.blockBuilder(), config.bucket(), config.ingest().kafka(), partitions,
        config.ingester().dataDir(), config.storage().head().chunkRangeMillis(), registry,
        new ProgressBoard(config.log().progressInterval(), System::nanoTime));
    HttpRouter router = new HttpRouter();
    HttpServer http = new HttpServer(config.server(), router, new RequestMetrics(registry));
    ServiceManager services = new ServiceManager(List.of(builder, http));
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, null, null, http, gc, List.of());
  }

  /**
   * The store-gateway target: the bucket store, and the Ingester gRPC service over it (Push
   * refused) with the HTTP operations endpoints. It joins the store-gateway ring (in the KV store
   * of {@code ingester.ring.*}) as JOINING and turns ACTIVE after its first bucket sync; queriers
   * without {@code --querier.store-gateway-addresses} find it there.
   */
  private static Weir createStoreGateway(WeirConfig config, FlagSet flags, PrometheusMeterRegistry registry,
      JvmGcMetrics gc, LongSupplier clock) {
    RequestMetrics requestMetrics = new RequestMetrics(registry);
    KvService kv = new KvService(config.ring().kv(), new KvMetrics(registry));
    AtomicReference<InstanceRingService> ringRef = new AtomicReference<>();
    StoreGatewayService gateway = new StoreGatewayService(config.bucketStore(), config.bucket(), registry,
        () -> ringRef.get().activate());
    GrpcServer grpc = new GrpcServer(config.server(), List.of(new StoreGatewayGrpcService(gateway::store)),
        List.of(GrpcInterceptors.tenant(config.tenants()), GrpcInterceptors.metrics(requestMetrics)), requestMetrics);
    InstanceRingService ring = new InstanceRingService(RingConfig.STORE_GATEWAY_RING_KEY, config.ring(), kv,
        config.ingester().id(), grpc::port, new RingMetrics(registry), clock, true, false);
    ringRef.set(ring);
    HttpRouter router = new HttpRouter();
    RingPages.registerStoreGatewayRing(router, ring::instanceRing, ring::kvConnected);
    HttpServer http = new HttpServer(config.server(), router, requestMetrics);
    // The ring last among the servers: stopped first, the instance leaves the ring before it stops serving.
    ServiceManager services = new ServiceManager(List.of(kv, gateway, grpc, ring, http));
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, null, grpc, http, gc, List.of());
  }

  /**
   * The compactor target: bucket retention on its own thread and the HTTP operations endpoints.
   * Run one (the chart does): runs are idempotent, so a second would only double the requests.
   */
  private static Weir createCompactor(WeirConfig config, FlagSet flags, PrometheusMeterRegistry registry,
      JvmGcMetrics gc, LongSupplier clock) {
    RuntimeConfig limits = new RuntimeConfig(config.runtimeConfig().file(), config.runtimeConfig().period(),
        config.limits(), registry);
    CompactorService compactor = new CompactorService(config.compactor(), config.bucket(),
        tenant -> limits.apply(tenant).compactorBlocksRetentionPeriod(), registry, clock);
    HttpRouter router = new HttpRouter();
    HttpServer http = new HttpServer(config.server(), router, new RequestMetrics(registry));
    ServiceManager services = new ServiceManager(List.of(limits, compactor, http));
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, null, null, http, gc, List.of());
  }

  /**
   * The querier target: the read endpoints over a {@link Querier} (ingesters from the ring or the
   * flags, store-gateways from the flags or else their ring), the ring pages as this querier sees them, and the
   * operations endpoints. No gRPC server: nothing calls a querier over gRPC.
   */
  private static Weir createQuerier(WeirConfig config, FlagSet flags, PrometheusMeterRegistry registry,
      JvmGcMetrics gc, LongSupplier clock) {
    RequestMetrics requestMetrics = new RequestMetrics(registry);
    KvService kv = new KvService(config.ring().kv(), new KvMetrics(registry));
    RingMetrics ringMetrics = new RingMetrics(registry);
    InstanceRingService ring = new InstanceRingService(config.ring(), kv, config.ingester().id(), () -> 0,
        ringMetrics, clock, false, false);
    InstanceRingService storeGateways = new InstanceRingService(RingConfig.STORE_GATEWAY_RING_KEY, config.ring(),
        kv, config.ingester().id(), () -> 0, ringMetrics, clock, false, false);
    QuerySources sources = new QuerySources(config.querier(), config.ingest().enabled(), config.ring().zone(),
        ring::instanceRing, ring::partitionRing, storeGateways::instanceRing,
        () -> ring.kvConnected() && storeGateways.kvConnected(), QuerySources::plaintextChannel);
    Querier querier = new Querier(config.querier(), sources, new QueryLimits(config.api().maxFetchedSeriesPerQuery(),
        config.querier().maxFetchedSamplesPerQuery()), new QuerierMetrics(registry), clock);
    HttpRouter router = new HttpRouter();
    QueryFreshness fresh = queryFreshness(config, clock);
    new PrometheusHttpApi(querier, config.tenants(), fresh).register(router);
    new RemoteReadApi(querier, config.tenants(), config.api(), fresh).register(router);
    new UserLag(querier::userLag, config.tenants(), clock).register(router);
    new MetadataApi(querier::metadata, config.tenants()).register(router);
    new ExemplarsApi(querier::exemplars, config.tenants()).register(router);
    RingPages.PartitionLag lag = RingPages.PartitionLag.UNKNOWN;
    List<AutoCloseable> closeables = new ArrayList<>();
    if (config.ingest().enabled()) {
      // Every partition's lag from Kafka (owners' committed offsets), as ingesters and distributors show it.
      PartitionLags fromKafka = PartitionLags.of(config.ingest(), ring::partitionRing, clock);
      closeables.add(fromKafka);
      lag = fromKafka;
    }
    RingPages.register(router, ring::instanceRing, ring::partitionRing, ring::kvConnected, lag);
    RingPages.registerStoreGatewayRing(router, storeGateways::instanceRing, storeGateways::kvConnected);
    HttpServer http = new HttpServer(config.server(), router, requestMetrics);
    ServiceManager services = new ServiceManager(List.of(kv, ring, storeGateways, sources, http));
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, null, null, http, gc, closeables);
  }

  public void start() throws Exception {
    services.startAll();
  }

  public void stop() {
    services.stopAll();
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort at shutdown
      }
    }
    gcMetrics.close();
  }

  public void awaitTerminated() throws InterruptedException {
    services.awaitTerminated();
  }

  public ServiceManager services() {
    return services;
  }

  public @Nullable Ingester ingester() {
    return ingester;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  private static QueryFreshness queryFreshness(WeirConfig config, LongSupplier clock) {
    return new QueryFreshness(config.querier().maxPartitionLag(), config.querier().failOnHighPartitionLag(), clock);
  }

  /** Whether this target runs a gRPC server (block-builder, querier and compactor do not). */
  public boolean servesGrpc() {
    return grpc != null;
  }

  public int grpcPort() {
    if (grpc == null) {
      throw new IllegalStateException("this target (block-builder, querier, compactor) has no gRPC server");
    }
    return grpc.port();
  }

  public int httpPort() {
    return http.port();
  }
}
