package dev.weir.storage.tsdb.shipper;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.weir.storage.tsdb.block.Ulid;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/**
 * A tenant's {@code shipper.json} next to its blocks, in the format of Thanos' and Mimir's
 * shipper file: {@code {"version": 1, "uploaded": ["<ULID>", ...]}}. Written under
 * {@code shipper.json.tmp}, fsynced, renamed over the old file, then the directory is fsynced: a
 * crash leaves the old or the new file, never a torn one (a torn temporary file is never read and
 * is overwritten by the next write).
 *
 * <p>Stateless.
 */
final class ShipperFile {
  static final String NAME = "shipper.json";
  static final String TMP = NAME + ".tmp";
  private static final int VERSION = 1;
  private static final JsonFactory JSON = new JsonFactory();

  private ShipperFile() {}

  /**
   * The uploaded block IDs recorded in {@code dir}; empty when there is no file.
   *
   * @throws IOException when the file cannot be read or is not a version-1 shipper file
   */
  static Set<String> read(Path dir) throws IOException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(dir.resolve(NAME));
    } catch (NoSuchFileException e) {
      return Set.of();
    }
    Set<String> ids = new TreeSet<>();
    int version = -1;
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if (field.equals("version") && value == JsonToken.VALUE_NUMBER_INT) {
          version = p.getIntValue();
        } else if (field.equals("uploaded") && value == JsonToken.START_ARRAY) {
          while (p.nextToken() == JsonToken.VALUE_STRING) {
            if (Ulid.isUlid(p.getText())) {
              ids.add(p.getText());
            }
          }
        } else {
          p.skipChildren();
        }
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IOException(dir.resolve(NAME) + " is not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (version != VERSION) {
      throw new IOException(dir.resolve(NAME) + ": unknown version " + version);
    }
    return ids;
  }

  /** Replaces the file in {@code dir} with these IDs, durably (see the class comment). */
  static void write(Path dir, Collection<String> uploaded) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.useDefaultPrettyPrinter();
      g.writeStartObject();
      g.writeNumberField("version", VERSION);
      g.writeArrayFieldStart("uploaded");
      for (String id : new TreeSet<>(uploaded)) {
        g.writeString(id);
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    out.write('\n');
    Files.createDirectories(dir);
    Path tmp = dir.resolve(TMP);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer b = ByteBuffer.wrap(out.toByteArray());
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    Files.move(tmp, dir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
