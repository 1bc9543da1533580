package dev.weir.ingester.logging;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.util.List;

/**
 * Logging settings.
 *
 * @param level minimum level: debug, info, warn, error
 * @param format logfmt (key=value pairs, one line per event) or json (one object per line)
 */
public record LogConfig(String level, String format) {
  /** Flag definitions for {@link LogConfig}. */
  public static final class Flags {
    private final Flag<String> level;
    private final Flag<String> format;

    public Flags(FlagSet fs) {
      level = fs.oneOf("log.level", "info", List.of("debug", "info", "warn", "error"),
          "Only log messages with the given severity or above.");
      format = fs.oneOf("log.format", "logfmt", List.of("logfmt", "json"),
          "Output log messages in the given format: logfmt or json, one event per line.");
    }

    public LogConfig build() {
      return new LogConfig(level.get(), format.get());
    }
  }
}
