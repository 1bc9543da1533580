package dev.weir.ingester;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.FlagSet;
import dev.weir.ingester.config.WeirConfig;
import dev.weir.ingester.logging.Logging;
import dev.weir.ingester.server.HeapTuner;
import dev.weir.ingester.tool.ToolMain;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code weir} command. Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT) or for
 * {@code --help}/{@code --version}; 1 for a bad flag, value or config file (one line on stderr
 * naming it) or a failed start. {@code weir tool ...} runs an operator subcommand instead
 * ({@link ToolMain}, with its own flags and exit codes).
 */
public final class Main {
  private static final Set<String> HELP = Set.of("-h", "-help", "--help", "-help-long", "--help-long");
  private static final Set<String> VERSION = Set.of("-version", "--version");

  private Main() {}

  public static void main(String[] args) {
    int code = run(args, System.out, System.err);
    if (code >= 0) {
      System.exit(code);
    }
  }

  /**
   * Runs the command.
   *
   * @return the exit code, or -1 after the service ran until a signal stopped it (the JVM is
   *     then already exiting through the shutdown hook, which must not be waited for)
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length > 0 && args[0].equals("tool")) {
      return ToolMain.runFromCommandLine(Arrays.copyOfRange(args, 1, args.length), out, err);
    }
    FlagSet fs = new FlagSet();
    WeirConfig.Flags flags = new WeirConfig.Flags(fs);
    for (String a : args) {
      if (HELP.contains(a)) {
        out.print(fs.usage("weir"));
        return 0;
      }
      if (VERSION.contains(a)) {
        out.println("weir, version " + Version.VERSION + " (java " + Runtime.version() + ")");
        return 0;
      }
      if (a.equals("--help-markdown") || a.equals("-help-markdown")) {
        out.print(fs.markdownReference());
        return 0;
      }
    }
    WeirConfig config;
    try {
      config = flags.load(args);
    } catch (ConfigException e) {
      err.println("weir: error: " + e.getMessage());
      return 1;
    }
    Logging.configure(config.log());
    Logger log = LoggerFactory.getLogger(Main.class);
    log.info("msg=\"starting weir\" version={} target={}", Version.VERSION, config.target());
    Weir weir;
    try {
      weir = Weir.create(config, fs);
    } catch (ConfigException e) {
      err.println("weir: error: " + e.getMessage());
      return 1;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      log.info("msg=\"received shutdown signal, stopping\"");
      weir.stop();
      log.info("msg=\"weir stopped\"");
    }, "shutdown"));
    try {
      weir.start();
    } catch (Exception e) {
      log.error("msg=\"weir failed to start\" err=\"{}\"", String.valueOf(e).replace('"', '\''));
      err.println("weir: error: failed to start: " + e.getMessage());
      return 1;
    }
    log.info("msg=\"weir is running\" http_port={} grpc_port={}", weir.httpPort(),
        weir.servesGrpc() ? String.valueOf(weir.grpcPort()) : "none");
    // After the start-up (WAL replay): from here on the heap follows the allocation rate.
    HeapTuner.startIfEnabled(weir.registry());
    try {
      weir.awaitTerminated();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return -1;
  }
}
