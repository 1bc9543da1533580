package dev.weir.ingester.tool;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.logging.LogConfig;
import dev.weir.ingester.logging.Logging;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * {@code weir tool <subcommand> [flags]}: dispatches to a subcommand and turns its outcome into
 * an exit code — 0 ok, 1 a failure found (damage, duplicates) or a runtime error (bad input such as
 * a missing topic, Kafka or I/O errors), 2 a usage error. Every error is one line on stderr
 * naming what is wrong. Results go to stdout as JSON lines.
 *
 * <p>Stateless; each run builds its subcommand afresh.
 */
public final class ToolMain {
  private static final Set<String> HELP = Set.of("-h", "-help", "--help", "help");
  private static final Map<String, Supplier<ToolCommand>> COMMANDS = new LinkedHashMap<>();

  static {
    COMMANDS.put("offsets", OffsetsCommand::new);
    COMMANDS.put("dump", DumpCommand::new);
    COMMANDS.put("find-duplicates", FindDuplicatesCommand::new);
    COMMANDS.put("replay", ReplayCommand::new);
    COMMANDS.put("wal inspect", WalInspectCommand::new);
    COMMANDS.put("blocks ls", BlocksLsCommand::new);
    COMMANDS.put("blocks verify", BlocksVerifyCommand::new);
  }

  private ToolMain() {}

  /**
   * Runs a subcommand from the command line: logs only errors (on stderr, as always), so stdout
   * holds the results and stderr the one line about a problem.
   */
  public static int runFromCommandLine(String[] args, PrintStream out, PrintStream err) {
    Logging.configure(new LogConfig("error", "logfmt"));
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
      ctx.getLogger("org.apache.kafka").setLevel(Level.ERROR); // connection retries are not news here
    }
    return run(args, out, err);
  }

  /**
   * Runs a subcommand.
   *
   * @param args the arguments after {@code tool}
   * @return the exit code
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      err.print(overview());
      return ToolException.USAGE;
    }
    if (HELP.contains(args[0])) {
      out.print(overview());
      return 0;
    }
    int words = args.length > 1 && COMMANDS.containsKey(args[0] + " " + args[1]) ? 2 : 1;
    String name = String.join(" ", Arrays.asList(args).subList(0, words));
    Supplier<ToolCommand> factory = COMMANDS.get(name);
    if (factory == null) {
      err.println("weir tool: unknown subcommand \"" + name + "\" (see weir tool --help)");
      return ToolException.USAGE;
    }
    return run(factory.get(), Arrays.copyOfRange(args, words, args.length), out, err);
  }

  private static int run(ToolCommand cmd, String[] args, PrintStream out, PrintStream err) {
    String prefix = "weir tool " + cmd.name() + ": ";
    for (String a : args) {
      if (HELP.contains(a) && !a.equals("help")) {
        out.print(cmd.usage());
        return 0;
      }
    }
    try {
      cmd.flags.parseArgs(mergeRepeated(args, cmd.repeatable()));
    } catch (ConfigException e) {
      err.println(prefix + e.getMessage());
      return ToolException.USAGE;
    }
    try {
      int code = cmd.run(List.copyOf(cmd.flags.positional()), out, err);
      out.flush();
      return code;
    } catch (ToolException e) {
      out.flush();
      err.println(prefix + e.getMessage());
      return e.exitCode();
    } catch (Exception e) {
      out.flush();
      err.println(prefix + "error: " + oneLine(e));
      return ToolException.FAILURE;
    }
  }

  /** Joins the values of repeated list flags into one comma-separated value. */
  static String[] mergeRepeated(String[] args, List<String> names) {
    List<String> out = new ArrayList<>();
    Map<String, Integer> at = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String body = a.startsWith("--") ? a.substring(2) : a.startsWith("-") ? a.substring(1) : "";
      int eq = body.indexOf('=');
      String name = eq >= 0 ? body.substring(0, eq) : body;
      if (!names.contains(name) || (eq < 0 && i + 1 >= args.length)) {
        out.add(a);
        continue;
      }
      String value = eq >= 0 ? body.substring(eq + 1) : args[++i];
      Integer prev = at.get(name);
      if (prev == null) {
        at.put(name, out.size());
        out.add("--" + name + "=" + value);
      } else {
        out.set(prev, out.get(prev) + "," + value);
      }
    }
    return out.toArray(String[]::new);
  }

  /** The exception and its causes on one line. */
  static String oneLine(Throwable e) {
    StringBuilder sb = new StringBuilder(String.valueOf(e));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      sb.append(": caused by ").append(c);
    }
    return sb.toString().replace('\n', ' ');
  }

  private static String overview() {
    StringBuilder sb = new StringBuilder("Usage: weir tool <subcommand> [flags]\n\nSubcommands:\n");
    for (Map.Entry<String, Supplier<ToolCommand>> c : COMMANDS.entrySet()) {
      sb.append(String.format("  %-16s %s%n", c.getKey(), c.getValue().get().summary()));
    }
    sb.append("\nweir tool <subcommand> --help lists its flags. Exit codes: 0 ok, 1 failure found or runtime")
        .append(" error,\n2 usage error. Results are JSON lines on stdout, errors one line on stderr.\n");
    return sb.toString();
  }
}
