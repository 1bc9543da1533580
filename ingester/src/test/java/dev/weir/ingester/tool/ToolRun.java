package dev.weir.ingester.tool;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** One in-process run of {@code weir tool}: exit code, stdout, stderr. */
record ToolRun(int code, String out, String err) {
  private static final ObjectMapper JSON = new ObjectMapper();

  static ToolRun of(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = ToolMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new ToolRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Stdout parsed as JSON lines. */
  List<JsonNode> lines() {
    List<JsonNode> nodes = new ArrayList<>();
    for (String l : out.split("\n")) {
      if (!l.isEmpty()) {
        try {
          nodes.add(JSON.readTree(l));
        } catch (java.io.IOException e) {
          throw new UncheckedIOException("not JSON: " + l, e);
        }
      }
    }
    return nodes;
  }

  @Override
  public String toString() {
    return "exit " + code + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
}
