package dev.weir.ingester.push;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.lifecycle.Service;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime config file ({@code --runtime-config.file}): per-tenant limit overrides, reloaded
 * every {@code --runtime-config.reload-period} while running. A file that fails to load keeps the
 * previous limits in force (logged; {@code weir_runtime_config_last_reload_successful} is 0). The
 * first load happens at start, where an invalid file stops start-up.
 *
 * <p>Thread-safe: readers see the current {@link Overrides} through a volatile reference.
 */
public final class RuntimeConfig implements Service, Function<String, Limits> {
  private static final Logger log = LoggerFactory.getLogger(RuntimeConfig.class);

  private final @Nullable Path file;
  private final Duration period;
  private final Limits defaults;
  private volatile Overrides current;
  private volatile boolean lastOk = true;
  private byte @Nullable [] lastContent;
  private @Nullable Thread thread;
  private volatile boolean stopped;

  public RuntimeConfig(@Nullable Path file, Duration period, Limits defaults, MeterRegistry registry) {
    this.file = file;
    this.period = period;
    this.defaults = defaults;
    this.current = new Overrides(defaults, java.util.Map.of());
    Gauge.builder("weir.runtime.config.last.reload.successful", this, r -> r.lastOk ? 1 : 0)
        .description("Whether the last load of the runtime config file succeeded.").register(registry);
  }

  @Override
  public String name() {
    return "runtime-config";
  }

  @Override
  public Limits apply(String tenant) {
    return current.apply(tenant);
  }

  public Overrides current() {
    return current;
  }

  @Override
  public void start() throws ConfigException, IOException {
    Path f = file;
    if (f == null) {
      return;
    }
    reload(f, true);
    Thread t = new Thread(() -> {
      while (!stopped) {
        try {
          Thread.sleep(period.toMillis());
          reload(f, false);
        } catch (InterruptedException e) {
          return;
        } catch (ConfigException | IOException e) {
          // reported in reload
        }
      }
    }, "runtime-config-reload");
    t.setDaemon(true);
    t.start();
    thread = t;
  }

  /** Loads the file if it changed; on error keeps the previous overrides (or throws at start). */
  void reload(Path f, boolean atStart) throws ConfigException, IOException {
    byte[] content;
    try {
      content = Files.readAllBytes(f);
    } catch (IOException e) {
      lastOk = false;
      log.error("msg=\"cannot read runtime config; keeping the previous limits\" file={} err=\"{}\"", f, e.getMessage());
      if (atStart) {
        throw e;
      }
      return;
    }
    if (lastContent != null && Arrays.equals(content, lastContent)) {
      return;
    }
    try {
      current = Overrides.load(f, defaults);
      lastContent = content;
      lastOk = true;
      log.info("msg=\"runtime config loaded\" file={} tenants_with_overrides={}", f, current.perTenant().size());
    } catch (ConfigException e) {
      lastOk = false;
      log.error("msg=\"invalid runtime config; keeping the previous limits\" err=\"{}\"",
          e.getMessage().replace('"', '\''));
      if (atStart) {
        throw e;
      }
    }
  }

  @Override
  public void stop() {
    stopped = true;
    Thread t = thread;
    if (t != null) {
      t.interrupt();
    }
  }
}
