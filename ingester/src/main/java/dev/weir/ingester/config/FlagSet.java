package dev.weir.ingester.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The set of all configuration keys, parsed from a YAML file and the command line (the command
 * line wins), in the manner of Mimir: {@code -server.http-listen-port=8080} or
 * {@code --server.http-listen-port 8080}; in YAML the same key either flat
 * ({@code server.http-listen-port: 8080}) or nested with underscores as Mimir writes it
 * ({@code server: {http_listen_port: 8080}}).
 *
 * <p>Not thread-safe; used once at start-up.
 */
public final class FlagSet {
  private final Map<String, Flag<?>> flags = new LinkedHashMap<>();
  private final List<String> positional = new ArrayList<>();

  public Flag<String> string(String name, String def, String help) {
    return add(new Flag<>(name, "string", def, help, s -> s, s -> s));
  }

  /** A string flag whose value must be one of {@code allowed}. */
  public Flag<String> oneOf(String name, String def, Collection<String> allowed, String help) {
    Set<String> set = Set.copyOf(allowed);
    return add(
        new Flag<>(
            name,
            "one of " + String.join("|", allowed),
            def,
            help,
            s -> {
              if (!set.contains(s)) {
                throw new IllegalArgumentException("must be one of " + String.join(", ", allowed));
              }
              return s;
            },
            s -> s));
  }

  public Flag<Integer> integer(String name, int def, String help) {
    return add(new Flag<>(name, "int", def, help, Integer::parseInt, String::valueOf));
  }

  public Flag<Long> int64(String name, long def, String help) {
    return add(new Flag<>(name, "int", def, help, Long::parseLong, String::valueOf));
  }

  public Flag<Double> float64(String name, double def, String help) {
    return add(new Flag<>(name, "float", def, help, Double::parseDouble, FlagSet::formatDouble));
  }

  public Flag<Boolean> bool(String name, boolean def, String help) {
    return add(new Flag<>(name, "boolean", def, help, FlagSet::parseBool, String::valueOf));
  }

  public Flag<Duration> duration(String name, Duration def, String help) {
    return add(new Flag<>(name, "duration", def, help, Durations::parse, Durations::format));
  }

  /** A comma-separated list; YAML may give a list. */
  public Flag<List<String>> list(String name, List<String> def, String help) {
    Function<String, List<String>> parse =
        s -> s.isEmpty() ? List.of() : Arrays.stream(s.split(",")).map(String::trim).toList();
    return add(new Flag<>(name, "list of strings", def, help, parse, l -> String.join(",", l)));
  }

  private <T> Flag<T> add(Flag<T> f) {
    if (flags.putIfAbsent(f.name(), f) != null) {
      throw new IllegalStateException("flag defined twice: " + f.name());
    }
    return f;
  }

  private static boolean parseBool(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "true", "1", "yes" -> true;
      case "false", "0", "no" -> false;
      default -> throw new IllegalArgumentException("not a boolean");
    };
  }

  private static String formatDouble(double d) {
    return d == Math.rint(d) && !Double.isInfinite(d) ? String.valueOf((long) d) : String.valueOf(d);
  }

  public @Nullable Flag<?> lookup(String name) {
    return flags.get(name);
  }

  public Collection<Flag<?>> all() {
    return flags.values();
  }

  /** Arguments that were not flags. */
  public List<String> positional() {
    return positional;
  }

  /**
   * Parses command-line arguments. Boolean flags may stand alone ({@code -x} means true).
   *
   * @throws ConfigException on an unknown flag, a missing value, or a value that does not parse
   */
  public void parseArgs(String[] args) throws ConfigException {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("-") || arg.equals("-") || arg.equals("--")) {
        positional.add(arg);
        continue;
      }
      String body = arg.startsWith("--") ? arg.substring(2) : arg.substring(1);
      String name = body;
      String value = null;
      int eq = body.indexOf('=');
      if (eq >= 0) {
        name = body.substring(0, eq);
        value = body.substring(eq + 1);
      }
      Flag<?> f = flags.get(name);
      if (f == null) {
        throw new ConfigException("unknown flag: " + arg + " (see --help)");
      }
      if (value == null) {
        if (f.defaultValue() instanceof Boolean) {
          value = "true";
        } else if (i + 1 < args.length) {
          value = args[++i];
        } else {
          throw new ConfigException("flag needs a value: " + arg);
        }
      }
      f.set(value, "command line");
    }
  }

  /** Applies a YAML file; keys not named by any flag are errors. */
  public void applyYaml(Path file) throws ConfigException {
    Object root;
    try (InputStream in = Files.newInputStream(file)) {
      root = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getMessage(), e);
    } catch (YAMLException e) {
      throw new ConfigException(
          "config file " + file + " is not valid YAML: " + e.getMessage().replace('\n', ' '), e);
    }
    if (root == null) {
      return;
    }
    if (!(root instanceof Map<?, ?> map)) {
      throw new ConfigException("config file " + file + " must hold a mapping of keys");
    }
    applyYamlMap("", map, file);
  }

  private void applyYamlMap(String prefix, Map<?, ?> map, Path file) throws ConfigException {
    for (Map.Entry<?, ?> e : map.entrySet()) {
      String key = prefix + String.valueOf(e.getKey()).replace('_', '-');
      Object v = e.getValue();
      Flag<?> f = flags.get(key);
      if (f != null) {
        f.set(yamlScalar(key, v), "config file");
      } else if (v instanceof Map<?, ?> nested) {
        applyYamlMap(key + ".", nested, file);
      } else {
        throw new ConfigException("unknown key in config file " + file + ": " + key);
      }
    }
  }

  private static String yamlScalar(String key, @Nullable Object v) throws ConfigException {
    if (v == null) {
      return "";
    }
    if (v instanceof List<?> l) {
      List<String> parts = new ArrayList<>();
      for (Object o : l) {
        parts.add(String.valueOf(o));
      }
      return String.join(",", parts);
    }
    if (v instanceof Map<?, ?>) {
      throw new ConfigException("config key " + key + " takes a value, not a mapping");
    }
    return String.valueOf(v);
  }

  /** {@code --help} text: every flag with its type, default and meaning, sorted by name. */
  public String usage(String program) {
    StringBuilder sb = new StringBuilder();
    sb.append("Usage: ").append(program).append(" [flags]\n\n");
    sb.append("Flags may be written -name=value, --name=value or --name value; every flag can\n");
    sb.append("also be set in the --config.file YAML under the same key.\n\n");
    for (Flag<?> f : sorted()) {
      sb.append("  --").append(f.name()).append(' ').append(f.typeName()).append('\n');
      sb.append("        ").append(f.help());
      sb.append(" (default ").append(quoteIfEmpty(f.defaultText())).append(")\n");
    }
    return sb.toString();
  }

  /** The configuration reference in Markdown, grouped by the first part of the key. */
  public String markdownReference() {
    StringBuilder sb = new StringBuilder();
    sb.append("# Configuration reference\n\n");
    sb.append("<!-- Generated from the flag definitions by `weir --help-markdown`; ")
        .append("a test fails when this file is stale. Do not edit by hand. -->\n\n");
    sb.append("Every key is a command-line flag (`-key=value` or `--key value`) and a key of the ")
        .append("YAML file given with `--config.file`, either flat (`server.http-listen-port: 8080`) ")
        .append("or nested with underscores (`server:` / `  http_listen_port: 8080`). ")
        .append("The command line overrides the file. Durations take units ms, s, m, h, d, w, y.\n");
    Map<String, List<Flag<?>>> groups = new TreeMap<>();
    for (Flag<?> f : sorted()) {
      String group = f.name().contains(".") ? f.name().substring(0, f.name().indexOf('.')) : f.name();
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(f);
    }
    for (Map.Entry<String, List<Flag<?>>> g : groups.entrySet()) {
      sb.append("\n## ").append(g.getKey()).append("\n\n");
      sb.append("| Key | Type | Default | Description |\n|---|---|---|---|\n");
      for (Flag<?> f : g.getValue()) {
        sb.append("| `").append(f.name()).append("` | ").append(f.typeName().replace("|", "\\|"))
            .append(" | `").append(f.defaultText().replace("|", "\\|")).append("` | ")
            .append(f.help().replace("|", "\\|")).append(" |\n");
      }
    }
    return sb.toString();
  }

  private List<Flag<?>> sorted() {
    List<Flag<?>> out = new ArrayList<>(flags.values());
    out.sort((a, b) -> a.name().compareTo(b.name()));
    return out;
  }

  private static String quoteIfEmpty(String s) {
    return s.isEmpty() ? "\"\"" : s;
  }
}
