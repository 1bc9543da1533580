package dev.weir.storage.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassDataSharingTest {
  @TempDir Path dir;

  /** A training that records its options and writes the archive the JVM would write at exit. */
  final List<List<String>> trainings = new ArrayList<>();

  ClassDataSharing.Training writesArchive() {
    return options -> {
      trainings.add(options);
      String dump = options.get(0);
      assertThat(dump).startsWith("-XX:ArchiveClassesAtExit=");
      Files.writeString(Path.of(dump.substring(dump.indexOf('=') + 1)), "archive");
    };
  }

  @Test
  void trainsOnceThenMapsTheArchiveUntilAJarChanges() throws Exception {
    Path jar = Files.writeString(dir.resolve("app.jar"), "v1");
    Path archive = dir.resolve("app.jsa");

    List<String> first = ClassDataSharing.archived(archive, List.of(jar), writesArchive());
    List<String> second = ClassDataSharing.archived(archive, List.of(jar), writesArchive());

    assertThat(trainings).hasSize(1);
    assertThat(first).isEqualTo(second).contains("-XX:SharedArchiveFile=" + archive);
    assertThat(archive).hasContent("archive");
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).as("no temporary archive left")
          .containsExactlyInAnyOrder("app.jar", "app.jsa", "app.jsa.key");
    }

    Files.writeString(jar, "v2");
    Files.setLastModifiedTime(jar, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 2_000));
    ClassDataSharing.archived(archive, List.of(jar), writesArchive());
    assertThat(trainings).as("a rebuilt jar trains again").hasSize(2);
  }

  @Test
  void aTrainingThatWritesNoArchiveGivesNoOptions() throws Exception {
    Path jar = Files.writeString(dir.resolve("app.jar"), "v1");
    Path archive = dir.resolve("app.jsa");

    List<String> options = ClassDataSharing.archived(archive, List.of(jar), o -> trainings.add(o));

    assertThat(trainings).hasSize(1);
    assertThat(options).isEmpty();
    assertThat(archive).doesNotExist();
  }

  @Test
  void aFailingTrainingGivesNoOptions() throws Exception {
    Path jar = Files.writeString(dir.resolve("app.jar"), "v1");

    List<String> options = ClassDataSharing.archived(dir.resolve("app.jsa"), List.of(jar), o -> {
      throw new IllegalStateException("the server did not start");
    });

    assertThat(options).isEmpty();
  }
}
