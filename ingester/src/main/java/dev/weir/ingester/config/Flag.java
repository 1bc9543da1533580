package dev.weir.ingester.config;

import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration key: its name (the command-line flag without dashes, also the YAML path),
 * default, help line and parser. The definition is the single source of the default and the doc:
 * {@code --help} and {@code docs/configuration.md} are generated from it.
 *
 * <p>Not thread-safe; flags are set once at start-up, then only read.
 */
public final class Flag<T> {
  private final String name;
  private final String typeName;
  private final T defaultValue;
  private final String help;
  private final Function<String, T> parser;
  private final Function<T, String> printer;
  private T value;
  private String source = "default";

  Flag(String name, String typeName, T defaultValue, String help, Function<String, T> parser,
      Function<T, String> printer) {
    this.name = name;
    this.typeName = typeName;
    this.defaultValue = defaultValue;
    this.help = help;
    this.parser = parser;
    this.printer = printer;
    this.value = defaultValue;
  }

  public String name() {
    return name;
  }

  public String typeName() {
    return typeName;
  }

  public String help() {
    return help;
  }

  public T get() {
    return value;
  }

  public T defaultValue() {
    return defaultValue;
  }

  /** The default as written on the command line. */
  public String defaultText() {
    return printer.apply(defaultValue);
  }

  /** Where the current value came from: default, the config file, or the command line. */
  public String source() {
    return source;
  }

  public boolean isSet() {
    return !"default".equals(source);
  }

  void set(String text, String from) throws ConfigException {
    try {
      value = Objects.requireNonNull(parser.apply(text.trim()));
      source = from;
    } catch (IllegalArgumentException | java.time.DateTimeException e) {
      throw new ConfigException(
          "invalid value \"" + text + "\" for " + name + " (" + typeName + "): " + e.getMessage());
    }
  }
}
