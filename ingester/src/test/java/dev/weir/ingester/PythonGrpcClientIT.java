package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.ingester.testing.RepoPaths;
import dev.weir.ingester.testing.WeirProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real gRPC client that is not ours — Python grpcio from Debian with stubs generated from
 * {@code proto/} by grpc_tools — pushes 10,000 series × 10 samples to two tenants against the
 * real binary and reads them back through QueryStream and {@code /api/v1/export}.
 */
class PythonGrpcClientIT {
  static final String PYTHON = "/usr/bin/python3";

  @TempDir Path dir;

  static String run(Path workDir, List<String> cmd, int timeoutSeconds) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true).start();
    boolean done = p.waitFor(timeoutSeconds, TimeUnit.SECONDS);
    String out = new String(p.getInputStream().readAllBytes());
    if (!done) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + cmd + "\n" + out);
    }
    assertThat(p.exitValue()).as("%s exited with output:\n%s", cmd, out).isZero();
    return out;
  }

  @Test
  void pythonClientRoundTripsTwoTenantsExactly() throws Exception {
    Path root = RepoPaths.root();
    Path stubs = Files.createDirectories(dir.resolve("stubs"));
    run(dir, List.of(PYTHON, "-m", "grpc_tools.protoc", "-I", root.resolve("proto/src/main/proto").toString(),
        "--python_out=" + stubs, "--grpc_python_out=" + stubs,
        "prometheus/types.proto", "prometheus/remote.proto", "weir/ingester.proto"), 120);
    try (WeirProcess weir = WeirProcess.start(dir)) {
      String out = run(dir, List.of(PYTHON, root.resolve("ingester/src/test/python/grpc_roundtrip.py").toString(),
          stubs.toString(), weir.grpcTarget(), weir.httpUrl(), "10000", "10"), 600);
      assertThat(out).contains("OK: 2 tenants x 10000 series x 10 samples");
    }
  }
}
