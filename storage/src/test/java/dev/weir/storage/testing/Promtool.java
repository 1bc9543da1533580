package dev.weir.storage.testing;

import dev.weir.storage.tsdb.labels.Labels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Prometheus' {@code promtool} (Debian's, installed by {@code bin/test}) on block directories. */
public final class Promtool {
  public static final String PROMTOOL = "/usr/bin/promtool";

  private Promtool() {}

  /** Runs a command to completion; its output, or an exception with the output when it fails. */
  public static String run(Path cwd, String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", cmd) + " did not finish");
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " exited " + p.exitValue() + ":\n"
          + (out.length() > 2000 ? out.substring(0, 2000) : out));
    }
    return out;
  }

  /**
   * {@code promtool tsdb dump} of a directory of blocks (copied to {@code work} with the empty WAL
   * directory promtool wants): series as promtool prints them → "value timestamp" lines.
   */
  public static Map<String, List<String>> dump(Path blocksDir, Path work) throws Exception {
    Path db = Files.createDirectories(work);
    Files.createDirectories(db.resolve("wal"));
    try (Stream<Path> blocks = Files.list(blocksDir)) {
      for (Path b : blocks.filter(b -> Files.exists(b.resolve("meta.json")))
          .filter(b -> !b.getFileName().toString().startsWith(".")).toList()) { // blocks only, not wal/
        copyTree(b, db.resolve(b.getFileName().toString()));
      }
    }
    return parseDump(run(work, PROMTOOL, "tsdb", "dump", db.toString()));
  }

  /**
   * {@code promtool tsdb dump} of a TSDB directory as it stands (a tenant's {@code
   * <data-dir>/tsdb/<tenant>}, also of a running ingester): series → "value timestamp" lines.
   */
  public static Map<String, List<String>> dumpInPlace(Path tsdbDir) throws Exception {
    return parseDump(run(tsdbDir, PROMTOOL, "tsdb", "dump", tsdbDir.toString()));
  }

  private static Map<String, List<String>> parseDump(String dump) {
    Map<String, List<String>> out = new TreeMap<>();
    for (String line : dump.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      int close = line.lastIndexOf('}');
      String[] rest = line.substring(close + 2).split(" ");
      out.computeIfAbsent(line.substring(0, close + 1), k -> new ArrayList<>()).add(rest[0] + " " + rest[1]);
    }
    return out;
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : files.toList()) {
        Path dest = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(dest);
        } else {
          Files.copy(f, dest);
        }
      }
    }
  }

  /** The series as promtool prints it: Go's %q quoting of values. */
  public static String key(Labels l) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < l.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(l.name(i)).append("=\"")
          .append(l.value(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return sb.append('}').toString();
  }

  /** A value as Go's %g prints it, for integers, NaN, ±Inf and short fractions below 1e6. */
  public static String format(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (Math.abs(v) >= 1e6) {
      throw new IllegalArgumentException("Go prints " + v + " with an exponent; keep test values below 1e6");
    }
    if (v == Math.rint(v)) {
      return String.valueOf((long) v);
    }
    return new java.math.BigDecimal(v).stripTrailingZeros().toPlainString();
  }
}
