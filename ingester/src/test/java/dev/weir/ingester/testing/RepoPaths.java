package dev.weir.ingester.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/** Locations in the repository, for tests that run the built binary or repository files. */
public final class RepoPaths {
  private RepoPaths() {}

  /** The repository root: failsafe passes it; otherwise the parent of the module directory. */
  public static Path root() {
    String p = System.getProperty("weir.repo.root");
    Path root = p != null ? Path.of(p) : Path.of("").toAbsolutePath().getParent();
    if (!Files.exists(root.resolve("pom.xml")) || !Files.isDirectory(root.resolve("proto"))) {
      throw new IllegalStateException("not the repository root: " + root);
    }
    return root.toAbsolutePath().normalize();
  }

  /** The fat jar built by the package phase. */
  public static Path weirJar() {
    Path jar = root().resolve("ingester/target/weir.jar");
    if (!Files.exists(jar)) {
      throw new IllegalStateException("missing " + jar + ": run the package phase first (mvn verify does)");
    }
    return jar;
  }
}
