package dev.weir.ingester;

import dev.weir.ingester.api.IngesterGrpcService;
import dev.weir.ingester.api.JsonImport;
import dev.weir.ingester.api.PrometheusHttpApi;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.config.WeirConfig;
import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.lifecycle.ServiceManager;
import dev.weir.ingester.push.Ingester;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.ring.InstanceRingService;
import dev.weir.ingester.ring.KvService;
import dev.weir.ingester.ring.RingPages;
import dev.weir.ring.kv.KvMetrics;
import dev.weir.ring.lifecycle.RingMetrics;
import dev.weir.ingester.server.GrpcInterceptors;
import dev.weir.ingester.server.GrpcServer;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.HttpServer;
import dev.weir.ingester.server.OpsEndpoints;
import dev.weir.ingester.server.RequestMetrics;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbMetrics;
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

/**
 * A Weir process: the components of its target wired together and run by a
 * {@link ServiceManager} (started in order, stopped in reverse). Usage:
 *
 * <pre>{@code
 * Weir weir = Weir.create(config, flags);
 * weir.start();
 * ...
 * weir.stop();
 * }</pre>
 *
 * <p>Thread-safe: {@link #stop()} may come from a shutdown hook.
 */
public final class Weir {
  private final PrometheusMeterRegistry registry;
  private final ServiceManager services;
  private final Ingester ingester;
  private final GrpcServer grpc;
  private final HttpServer http;
  private final JvmGcMetrics gcMetrics;

  private Weir(PrometheusMeterRegistry registry, ServiceManager services, Ingester ingester,
      GrpcServer grpc, HttpServer http, JvmGcMetrics gcMetrics) {
    this.registry = registry;
    this.services = services;
    this.ingester = ingester;
    this.grpc = grpc;
    this.http = http;
    this.gcMetrics = gcMetrics;
  }

  /** Wires the components of {@code config.target()}; nothing runs until {@link #start()}. */
  public static Weir create(WeirConfig config, FlagSet flags) {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);

    RequestMetrics requestMetrics = new RequestMetrics(registry);
    Tsdb tsdb = new Tsdb(config.storage(), new TsdbMetrics(registry), System::currentTimeMillis,
        tenant -> () -> config.limits().maxGlobalSeriesPerUser());
    IngesterMetrics ingesterMetrics = new IngesterMetrics(registry, System::currentTimeMillis,
        config.ingester().activeSeriesIdleTimeout().toMillis());
    Ingester ingester = new Ingester(config.ingester(), tsdb, tenant -> config.limits(),
        ingesterMetrics, System::currentTimeMillis);

    GrpcServer grpc = new GrpcServer(config.server(), List.of(new IngesterGrpcService(ingester)),
        List.of(GrpcInterceptors.tenant(config.tenants()), GrpcInterceptors.metrics(requestMetrics)));

    KvService kv = new KvService(config.ring().kv(), new KvMetrics(registry));
    InstanceRingService ring = new InstanceRingService(config.ring(), kv, config.ingester().id(), grpc::port,
        new RingMetrics(registry), System::currentTimeMillis, true);

    HttpRouter router = new HttpRouter();
    new PrometheusHttpApi(ingester, config.tenants()).register(router);
    new JsonImport(ingester, config.tenants()).register(router);
    RingPages.register(router, ring::instanceRing, ring::partitionRing, ring::kvConnected);
    HttpServer http = new HttpServer(config.server(), router, requestMetrics);

    List<Service> list = new ArrayList<>();
    list.add(kv);
    list.add(ingester);
    list.add(grpc);
    list.add(http);
    list.add(ring);
    ServiceManager services = new ServiceManager(list);
    OpsEndpoints.register(router, registry, services, flags, Version.VERSION);
    return new Weir(registry, services, ingester, grpc, http, gc);
  }

  public void start() throws Exception {
    services.startAll();
  }

  public void stop() {
    services.stopAll();
    gcMetrics.close();
  }

  public void awaitTerminated() throws InterruptedException {
    services.awaitTerminated();
  }

  public ServiceManager services() {
    return services;
  }

  public Ingester ingester() {
    return ingester;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public int grpcPort() {
    return grpc.port();
  }

  public int httpPort() {
    return http.port();
  }
}
