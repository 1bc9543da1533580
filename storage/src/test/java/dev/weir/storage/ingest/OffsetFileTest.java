package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OffsetFileTest {
  @TempDir Path dir;

  @Test
  void roundTripsTheLastWrittenOffset() throws Exception {
    OffsetFile f = new OffsetFile(dir, "topic", 3);
    f.write(42);
    f.write(1_234_567_890_123L);
    assertThat(new OffsetFile(dir, "topic", 3).read()).hasValue(1_234_567_890_123L);
    assertThat(f.path()).isEqualTo(dir.resolve("kafka-offsets/topic-3"));
    assertThat(f.path().resolveSibling("topic-3.tmp")).as("no temp file left").doesNotExist();
  }

  @Test
  void missingFileIsNoOffset() throws Exception {
    assertThat(new OffsetFile(dir, "topic", 0).read()).isEmpty();
  }

  @Test
  void garbageOrTornFileIsAnErrorTheReaderTreatsAsNoOffset() throws Exception {
    OffsetFile f = new OffsetFile(dir, "topic", 0);
    Files.createDirectories(f.path().getParent());
    for (String content : new String[] {"garbage\n", "", "12x", "-5\n", "\0\0\0"}) {
      Files.writeString(f.path(), content);
      assertThatThrownBy(f::read).as("content %s", content).isInstanceOf(IOException.class)
          .hasMessageContaining("not an offset");
    }
  }

  @Test
  void fsyncsTheDirectoryAfterTheRename() throws Exception {
    List<String> calls = new ArrayList<>();
    OffsetFile f = new OffsetFile(dir, "topic", 1, d -> {
      // At the directory fsync the rename has happened: the new offset is in place, no temp file.
      calls.add(d.getFileName() + " " + Files.readString(d.resolve("topic-1")).trim() + " "
          + Files.exists(d.resolve("topic-1.tmp")));
      OffsetFile.FSYNC_DIR.sync(d);
    });
    f.write(7);
    f.write(8);
    assertThat(calls).containsExactly("kafka-offsets 7 false", "kafka-offsets 8 false");
  }

  @Test
  void failedDirectoryFsyncIsReportedToTheCaller() throws Exception {
    OffsetFile f = new OffsetFile(dir, "topic", 1, d -> {
      throw new IOException("Input/output error (dir fsync)");
    });
    assertThatThrownBy(() -> f.write(9)).isInstanceOf(IOException.class).hasMessageContaining("dir fsync");
  }
}
