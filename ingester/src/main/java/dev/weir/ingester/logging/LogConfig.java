package dev.weir.ingester.logging;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.time.Duration;
import java.util.List;

/**
 * Logging settings.
 *
 * @param level minimum level: debug, info, warn, error
 * @param format logfmt (key=value pairs, one line per event) or json (one object per line)
 * @param progressInterval between two progress lines of a long phase (WAL replay, catch-up,
 *     block-builder cycle); zero logs every step
 */
public record LogConfig(String level, String format, Duration progressInterval) {
  /** The given level and format, progress lines at the default interval. */
  public LogConfig(String level, String format) {
    this(level, format, Duration.ofSeconds(10));
  }

  /** Flag definitions for {@link LogConfig}. */
  public static final class Flags {
    private final Flag<String> level;
    private final Flag<String> format;
    private final Flag<Duration> progressInterval;

    public Flags(FlagSet fs) {
      level = fs.oneOf("log.level", "info", List.of("debug", "info", "warn", "error"),
          "Only log messages with the given severity or above.");
      format = fs.oneOf("log.format", "logfmt", List.of("logfmt", "json"),
          "Output log messages in the given format: logfmt or json, one event per line.");
      progressInterval = fs.duration("log.progress-interval", Duration.ofSeconds(10),
          "How often a long phase (WAL replay, Kafka catch-up, a block-builder cycle) logs its progress: done/total,"
              + " rate and time left; it also logs when it starts and ends. 0 logs every step (for tests).");
    }

    public LogConfig build() {
      return new LogConfig(level.get(), format.get(), progressInterval.get());
    }
  }
}
