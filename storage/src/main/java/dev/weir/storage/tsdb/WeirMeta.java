package dev.weir.storage.tsdb;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.weir.storage.tsdb.block.BlockMeta;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Reads Weir's own section of a block's meta.json, {@code "weir": {...}} (who wrote the block,
 * whether it holds out-of-order samples; Prometheus and promtool ignore it). Stateless.
 */
public final class WeirMeta {
  private static final JsonFactory JSON = new JsonFactory();

  private WeirMeta() {}

  /**
   * The text of the scalar member {@code weir.<name>} of a block's meta.json ("true" for a
   * boolean), or null when absent.
   *
   * @throws IOException when meta.json cannot be read or is not JSON
   */
  public static @Nullable String value(Path blockDir, String name) throws IOException {
    try (JsonParser p = JSON.createParser(Files.readAllBytes(blockDir.resolve(BlockMeta.FILE)))) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("meta.json is not an object: " + blockDir);
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if (!field.equals("weir") || value != JsonToken.START_OBJECT) {
          p.skipChildren();
          continue;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String inner = p.currentName();
          JsonToken v = p.nextToken();
          if (inner.equals(name) && v.isScalarValue()) {
            return p.getText();
          }
          p.skipChildren();
        }
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IOException("meta.json of " + blockDir + " is not valid JSON: " + e.getOriginalMessage(), e);
    }
    return null;
  }
}
