package dev.weir.storage.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * AppCDS archives for the child JVMs the tests start again and again (Weir, the Kafka broker and
 * its tools). A child JVM spends most of its start-up loading and verifying classes; mapping them
 * from an archive instead halves the time to ready on this 2-core host and frees the cores for the
 * processes already running. The JVM still checks every archived class against the class path
 * and silently loads from the jars when they differ, so an archive can make a start slower to
 * come only by not being used, never change what runs.
 *
 * <p>An archive is made once per build of its class path (a "training" run that starts the
 * program and stops it with SIGTERM, so that {@code -XX:ArchiveClassesAtExit} writes it) and
 * reused by every later JVM of every test class and fork; a key file next to it holds the jars'
 * sizes and times and the JDK, and a different key trains again. Training writes to a temporary
 * name and renames, so concurrent forks at worst train twice. When training fails the caller gets
 * no options and the child starts as it would without this class; so does every child when the
 * system property {@code weir.test.cds} is {@code false} (e.g. {@code mvn verify -Dweir.test.cds=false},
 * to compare).
 *
 * <p>Thread-safe (synchronized).
 */
public final class ClassDataSharing {
  private ClassDataSharing() {}

  /** Starts the program with the given extra JVM options and stops it so that the JVM exits normally. */
  public interface Training {
    void run(List<String> jvmOptions) throws Exception;
  }

  /**
   * The JVM options that use {@code archive} for a JVM with this class path, training it first
   * when it is missing or made for other jars. Empty when training fails (reported on stderr).
   */
  public static List<String> options(Path archive, List<Path> classpath, Training training) {
    if (!Boolean.parseBoolean(System.getProperty("weir.test.cds", "true"))) {
      return List.of();
    }
    return archived(archive, classpath, training);
  }

  /** {@link #options} whatever {@code weir.test.cds} says (benchmarks, which measure the archive). */
  public static synchronized List<String> archived(Path archive, List<Path> classpath, Training training) {
    try {
      String key = key(classpath);
      Path keyFile = archive.resolveSibling(archive.getFileName() + ".key");
      boolean current = Files.exists(archive) && Files.exists(keyFile)
          && Files.readString(keyFile, StandardCharsets.UTF_8).equals(key);
      if (!current) {
        Path tmp = archive.resolveSibling(archive.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        Files.deleteIfExists(tmp);
        long started = System.nanoTime();
        training.run(List.of("-XX:ArchiveClassesAtExit=" + tmp, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
        if (!Files.exists(tmp)) {
          throw new IllegalStateException("the training run wrote no archive " + tmp);
        }
        Files.move(tmp, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.writeString(keyFile, key, StandardCharsets.UTF_8);
        System.err.printf("class data sharing: trained %s in %d ms%n", archive,
            (System.nanoTime() - started) / 1_000_000);
      }
      // cds=off: a JDK or jar that no longer matches means a quiet fallback, not a warning in the child's log.
      return List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off");
    } catch (Exception e) {
      System.err.println("class data sharing: no archive " + archive + ", children start without one: " + e);
      return List.of();
    }
  }

  /** The jars of a directory, as {@code dir/*} on a class path expands to. */
  public static List<Path> jarsIn(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
    }
  }

  private static String key(List<Path> classpath) throws IOException {
    List<String> lines = new ArrayList<>();
    lines.add(System.getProperty("java.home") + " " + System.getProperty("java.vm.version"));
    for (Path p : classpath) {
      FileTime t = Files.getLastModifiedTime(p);
      lines.add(p.toAbsolutePath() + " " + Files.size(p) + " " + t.toMillis());
    }
    return String.join("\n", lines) + "\n";
  }
}
