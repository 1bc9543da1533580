package dev.weir.storage.tsdb.shipper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.storage.tsdb.block.Ulid;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShipperFileTest {
  @TempDir Path dir;
  private final String a = Ulid.random(1_000);
  private final String b = Ulid.random(2_000);

  @Test
  void noFileMeansNothingUploaded() throws Exception {
    assertThat(ShipperFile.read(dir)).isEmpty();
  }

  @Test
  void writesTheThanosFormatAndReadsItBack() throws Exception {
    ShipperFile.write(dir, List.of(b, a));
    assertThat(ShipperFile.read(dir)).containsExactlyInAnyOrder(a, b);
    String json = Files.readString(dir.resolve("shipper.json")).replaceAll("\\s", "");
    assertThat(json).isEqualTo("{\"version\":1,\"uploaded\":[\"" + a + "\",\"" + b + "\"]}");
    assertThat(Files.exists(dir.resolve("shipper.json.tmp"))).isFalse();
  }

  @Test
  void aTornTemporaryFileFromACrashIsIgnoredAndReplaced() throws Exception {
    ShipperFile.write(dir, List.of(a));
    // A crash in the middle of the next write: half a temporary file, the old file intact.
    Files.writeString(dir.resolve("shipper.json.tmp"), "{\"version\": 1, \"uploaded\": [\"" + a + "\", \"01J");
    assertThat(ShipperFile.read(dir)).containsExactly(a);
    ShippedBlocks shipped = new ShippedBlocks(tenant -> dir);
    assertThat(shipped.uploaded("t")).containsExactly(a);
    shipped.markUploaded("t", b);
    assertThat(ShipperFile.read(dir)).containsExactlyInAnyOrder(a, b);
    assertThat(Files.exists(dir.resolve("shipper.json.tmp"))).isFalse();
    assertThat(new ShippedBlocks(tenant -> dir).uploaded("t")).containsExactlyInAnyOrder(a, b);
  }

  @Test
  void aDamagedFileIsAnErrorAndTheRecordStartsOver() throws Exception {
    Files.writeString(dir.resolve("shipper.json"), "{\"version\": 1, \"uploa");
    assertThatThrownBy(() -> ShipperFile.read(dir)).isInstanceOf(IOException.class).hasMessageContaining("JSON");
    Files.writeString(dir.resolve("shipper.json"), "{\"version\": 7, \"uploaded\": []}");
    assertThatThrownBy(() -> ShipperFile.read(dir)).isInstanceOf(IOException.class).hasMessageContaining("version 7");
    ShippedBlocks shipped = new ShippedBlocks(tenant -> dir);
    assertThat(shipped.uploaded("t")).isEmpty();
    shipped.markUploaded("t", a);
    assertThat(ShipperFile.read(dir)).containsExactly(a);
  }
}
