package dev.weir.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Locations in the repository. */
final class Repo {
  private Repo() {}

  static Path root() {
    String p = System.getProperty("weir.repo.root");
    Path start = p != null ? Path.of(p) : Path.of("").toAbsolutePath();
    for (Path d = start.toAbsolutePath(); d != null; d = d.getParent()) {
      if (Files.isDirectory(d.resolve("deploy/helm/weir")) && Files.exists(d.resolve("pom.xml"))) {
        return d.normalize();
      }
    }
    throw new IllegalStateException("repository root not found above " + start);
  }

  static Path chart() {
    return root().resolve("deploy/helm/weir");
  }
}
