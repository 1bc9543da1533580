package dev.weir.ingester.server;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.lifecycle.ServiceManager;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;

/**
 * Operational endpoints: {@code /metrics} (Prometheus text format), {@code /ready} (200 only when
 * every service runs and is ready, else 503 with the reasons), {@code /health} (200 while the
 * process serves HTTP: liveness), {@code /config} (the effective configuration and where each
 * value came from) and {@code /} (an index of the endpoints).
 */
public final class OpsEndpoints {
  private OpsEndpoints() {}

  public static void register(HttpRouter router, PrometheusMeterRegistry registry,
      ServiceManager services, FlagSet flags, String version) {
    io.micrometer.core.instrument.Gauge.builder("weir.ready", services, s -> s.notReadyReason() == null ? 1 : 0)
        .description("1 when /ready answers 200 (every service runs and is ready), else 0.").register(registry);
    router.get("metrics", "/metrics", ex -> ex.respond(200,
        "text/plain; version=0.0.4; charset=utf-8", registry.scrape().getBytes(StandardCharsets.UTF_8)));
    router.get("ready", "/ready", ex -> {
      String reason = services.notReadyReason();
      if (reason == null) {
        ex.respondText(200, "ready\n");
      } else {
        ex.respondText(503, "not ready: " + reason + "\n");
      }
    });
    router.get("health", "/health", ex -> ex.respondText(200, "ok\n"));
    router.get("config", "/config", ex -> {
      StringBuilder sb = new StringBuilder("# Effective configuration of weir ").append(version).append('\n');
      for (Flag<?> f : flags.all()) {
        sb.append(f.name()).append(": ").append(printable(f)).append("  # ").append(f.source()).append('\n');
      }
      ex.respondText(200, sb.toString());
    });
    router.get("index", "/", ex -> {
      StringBuilder sb = new StringBuilder("Weir ").append(version).append("\n\nEndpoints:\n");
      for (String r : router.describe()) {
        sb.append("  ").append(r).append('\n');
      }
      ex.respondText(200, sb.toString());
    });
  }

  private static String printable(Flag<?> f) {
    String v = String.valueOf(f.get());
    if (f.name().contains("password") || f.name().contains("secret")) {
      return v.isEmpty() ? "\"\"" : "<redacted>";
    }
    return v.isEmpty() ? "\"\"" : v;
  }
}
