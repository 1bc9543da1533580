package dev.weir.storage.tsdb.block;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A block's {@code meta.json}, in Prometheus' format (version 1). {@code maxTime} is exclusive.
 *
 * @param extraJson optional extra top-level JSON members written verbatim (e.g. a
 *     {@code "weir": {...}} section naming the Kafka offsets a block-builder block covers); ""
 *     for none
 */
public record BlockMeta(String ulid, long minTime, long maxTime, long numSamples, long numSeries,
    long numChunks, int level, List<String> sources, String extraJson) {

  public static final String FILE = "meta.json";

  public String toJson() {
    StringBuilder sb = new StringBuilder();
    sb.append("{\n\t\"ulid\": \"").append(ulid).append("\",\n");
    sb.append("\t\"minTime\": ").append(minTime).append(",\n");
    sb.append("\t\"maxTime\": ").append(maxTime).append(",\n");
    sb.append("\t\"stats\": {\n\t\t\"numSamples\": ").append(numSamples)
        .append(",\n\t\t\"numSeries\": ").append(numSeries)
        .append(",\n\t\t\"numChunks\": ").append(numChunks).append("\n\t},\n");
    sb.append("\t\"compaction\": {\n\t\t\"level\": ").append(level).append(",\n\t\t\"sources\": [");
    for (int i = 0; i < sources.size(); i++) {
      sb.append(i == 0 ? "\n\t\t\t\"" : ",\n\t\t\t\"").append(sources.get(i)).append('"');
    }
    sb.append("\n\t\t]\n\t},\n");
    if (!extraJson.isEmpty()) {
      sb.append('\t').append(extraJson).append(",\n");
    }
    sb.append("\t\"version\": 1\n}\n");
    return sb.toString();
  }

  public static BlockMeta read(Path blockDir) throws IOException {
    return parse(Files.readString(blockDir.resolve(FILE), StandardCharsets.UTF_8), blockDir.toString());
  }

  /**
   * Parses the content of a meta.json.
   *
   * @param where names the block in error messages
   */
  public static BlockMeta parse(String json, String where) throws IOException {
    String ulid = "";
    long min = 0;
    long max = 0;
    long samples = 0;
    long series = 0;
    long chunks = 0;
    int level = 1;
    List<String> sources = new ArrayList<>();
    try (JsonParser p = new JsonFactory().createParser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("meta.json is not an object: " + where);
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String f = p.currentName();
        p.nextToken();
        switch (f) {
          case "ulid" -> ulid = p.getText();
          case "minTime" -> min = p.getLongValue();
          case "maxTime" -> max = p.getLongValue();
          case "stats" -> {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String g = p.currentName();
              p.nextToken();
              switch (g) {
                case "numSamples" -> samples = p.getLongValue();
                case "numSeries" -> series = p.getLongValue();
                case "numChunks" -> chunks = p.getLongValue();
                default -> p.skipChildren();
              }
            }
          }
          case "compaction" -> {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String g = p.currentName();
              p.nextToken();
              if (g.equals("level")) {
                level = p.getIntValue();
              } else if (g.equals("sources")) {
                while (p.nextToken() != JsonToken.END_ARRAY) {
                  sources.add(p.getText());
                }
              } else {
                p.skipChildren();
              }
            }
          }
          default -> p.skipChildren();
        }
      }
    }
    return new BlockMeta(ulid, min, max, samples, series, chunks, level, sources, "");
  }
}
