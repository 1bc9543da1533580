package dev.weir.storage.tsdb;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.weir.proto.prompb.MetricMetadata;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A block's metadata side file, {@value #NAME}: the metric metadata of the families whose series
 * the block holds, so metadata outlives the head (Prometheus and promtool ignore files they do
 * not know in a block directory). Format, version 1:
 *
 * <pre>{@code
 * {"version": 1, "metadata": {"http_requests": {"type": "counter", "help": "...", "unit": ""}, ...}}
 * }</pre>
 *
 * Types are the lower-case names of {@code prometheus.MetricMetadata.MetricType}, as
 * {@code /api/v1/metadata} shows them. Written to a temporary file, fsynced and renamed.
 * Stateless.
 */
public final class MetadataFile {
  public static final String NAME = "weir-metadata.json";
  private static final JsonFactory JSON = new JsonFactory();

  private MetadataFile() {}

  /** Writes the side file into {@code blockDir}; nothing when {@code meta} is empty. */
  public static void write(Path blockDir, SortedMap<String, MetricMetadata> meta) throws IOException {
    if (meta.isEmpty()) {
      return;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(bytes)) {
      g.writeStartObject();
      g.writeNumberField("version", 1);
      g.writeObjectFieldStart("metadata");
      for (Map.Entry<String, MetricMetadata> e : meta.entrySet()) {
        g.writeObjectFieldStart(e.getKey());
        MetricMetadata m = e.getValue();
        g.writeStringField("type", m.getType() == MetricMetadata.MetricType.UNRECOGNIZED ? "unknown"
            : m.getType().name().toLowerCase(Locale.ROOT));
        g.writeStringField("help", m.getHelp());
        g.writeStringField("unit", m.getUnit());
        g.writeEndObject();
      }
      g.writeEndObject();
      g.writeEndObject();
    }
    Path tmp = blockDir.resolve(NAME + ".tmp");
    Files.write(tmp, bytes.toByteArray());
    try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      c.force(true);
    }
    Files.move(tmp, blockDir.resolve(NAME), StandardCopyOption.ATOMIC_MOVE);
  }

  /** Reads the side file of {@code blockDir}; empty when there is none. */
  public static SortedMap<String, MetricMetadata> read(Path blockDir) throws IOException {
    SortedMap<String, MetricMetadata> out = new TreeMap<>();
    Path f = blockDir.resolve(NAME);
    if (!Files.exists(f)) {
      return out;
    }
    try (JsonParser p = JSON.createParser(Files.readAllBytes(f))) {
      expect(p.nextToken(), JsonToken.START_OBJECT, f);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken t = p.nextToken();
        if ("metadata".equals(field) && t == JsonToken.START_OBJECT) {
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String family = p.currentName();
            expect(p.nextToken(), JsonToken.START_OBJECT, f);
            MetricMetadata.Builder b = MetricMetadata.newBuilder().setMetricFamilyName(family);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String k = p.currentName();
              p.nextToken();
              String v = p.getValueAsString("");
              switch (k) {
                case "type" -> b.setType(type(v));
                case "help" -> b.setHelp(v);
                case "unit" -> b.setUnit(v);
                default -> p.skipChildren();
              }
            }
            out.put(family, b.build());
          }
        } else {
          p.skipChildren();
        }
      }
    }
    return out;
  }

  private static MetricMetadata.MetricType type(String name) {
    try {
      return MetricMetadata.MetricType.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return MetricMetadata.MetricType.UNKNOWN;
    }
  }

  private static void expect(JsonToken got, JsonToken want, Path f) throws IOException {
    if (got != want) {
      throw new IOException(f + ": expected " + want + ", found " + got);
    }
  }
}
