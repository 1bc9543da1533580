package dev.weir.storage.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The jars a server module of this repository copies to its {@code target/lib} (the Kafka broker,
 * S3Proxy), for starting that server as a child JVM. Found from {@code weir.repo.root} or the
 * working directory upwards.
 */
public final class ModuleLib {
  private ModuleLib() {}

  /** {@code <repo>/<module>/target/lib}, e.g. for {@code storage/kafka-broker}. */
  public static Path of(String module) {
    String root = System.getProperty("weir.repo.root");
    Path start = root != null ? Path.of(root) : Path.of("").toAbsolutePath();
    for (Path p = start; p != null; p = p.getParent()) {
      Path lib = p.resolve(module).resolve("target/lib");
      if (Files.isDirectory(lib)) {
        return lib;
      }
    }
    throw new IllegalStateException(module + "/target/lib not found above " + start
        + ": build from the repository root (mvn verify builds the " + module + " module first)");
  }
}
