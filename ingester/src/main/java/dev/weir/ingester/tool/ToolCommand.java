package dev.weir.ingester.tool;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One subcommand: its name ({@code offsets}, {@code wal inspect}), a summary line, its flags
 * (defined in the constructor on {@link #flags}) and what it does. A new instance per run; not
 * thread-safe.
 */
abstract class ToolCommand {
  /** The subcommand's own flags; never part of the main binary's flag set. */
  protected final FlagSet flags = new FlagSet();

  abstract String name();

  abstract String summary();

  /** List flags that may be repeated ({@code --group a --group b} = {@code --group a,b}). */
  List<String> repeatable() {
    return List.of();
  }

  /** Positional arguments in the usage line, e.g. {@code <dir>}; empty for none. */
  String arguments() {
    return "";
  }

  /**
   * Runs with the flags already parsed.
   *
   * @param args the positional arguments
   * @param out results (JSON lines)
   * @param err diagnostics beyond the result
   * @return the exit code: 0, or 1 when the command found a failure it reported on {@code out}
   * @throws ToolException to end with its exit code and message
   */
  abstract int run(List<String> args, PrintStream out, PrintStream err) throws Exception;

  /** {@code --help} of this subcommand. */
  String usage() {
    StringBuilder sb = new StringBuilder();
    sb.append("Usage: weir tool ").append(name()).append(" [flags]");
    sb.append(arguments().isEmpty() ? "" : " " + arguments()).append("\n\n").append(summary()).append("\n\n");
    sb.append("Flags may be written -name=value, --name=value or --name value.\n");
    List<Flag<?>> sorted = new ArrayList<>(flags.all());
    sorted.sort(Comparator.comparing(Flag::name));
    for (Flag<?> f : sorted) {
      sb.append("  --").append(f.name()).append(' ').append(f.typeName()).append("\n        ").append(f.help());
      String def = f.defaultText();
      sb.append(def.isEmpty() ? "" : " (default " + def + ")").append('\n');
    }
    sb.append("\nExit codes: 0 ok, 1 failure found or runtime error, 2 usage error.\n");
    return sb.toString();
  }
}
