package dev.weir.storage.bucket;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A block's {@code deletion-mark.json}, in Mimir's (Thanos') format: {@code {"id": "<ULID>",
 * "deletion_time": <unix seconds>, "version": 1}}. A marked block is deleted after the deletion
 * delay; readers (the store-gateway) stop loading it as soon as they see the mark, so its files
 * are not read when they vanish.
 *
 * @param id the block's ULID
 * @param deletionTimeSeconds when the block was marked, in Unix seconds
 */
public record DeletionMark(String id, long deletionTimeSeconds) {
  public static final String FILE = "deletion-mark.json";
  /** Larger than any mark this class writes; a longer file is read in part and fails to parse. */
  private static final int MAX_BYTES = 4096;
  private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([0-9A-Za-z]+)\"");
  private static final Pattern TIME = Pattern.compile("\"deletion_time\"\\s*:\\s*(\\d+)");

  public byte[] toJson() {
    return ("{\n\t\"id\": \"" + id + "\",\n\t\"deletion_time\": " + deletionTimeSeconds + ",\n\t\"version\": 1\n}\n")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** A mark that exists but cannot be parsed. */
  public static final class DamagedException extends IOException {
    private static final long serialVersionUID = 1L;

    DamagedException(String message) {
      super(message);
    }
  }

  /** Parses a mark. */
  public static DeletionMark parse(byte[] json, String where) throws DamagedException {
    String s = new String(json, StandardCharsets.UTF_8);
    Matcher id = ID.matcher(s);
    Matcher time = TIME.matcher(s);
    if (!id.find() || !time.find()) {
      throw new DamagedException("damaged " + FILE + " of " + where + ": " + s.strip());
    }
    return new DeletionMark(id.group(1), Long.parseLong(time.group(1)));
  }

  /** Whether the block has a mark (of any content), from one existence check. */
  public static boolean exists(Bucket bucket, String tenant, String id) throws IOException {
    try {
      bucket.size(tenant, id, FILE);
      return true;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  /**
   * The block's mark, or null when it has none.
   *
   * @throws DamagedException when it is damaged
   * @throws IOException when it cannot be read
   */
  public static @Nullable DeletionMark read(Bucket bucket, String tenant, String id) throws IOException {
    byte[] json;
    try {
      json = bucket.read(tenant, id, FILE, 0, MAX_BYTES);
    } catch (NoSuchFileException e) {
      return null;
    }
    return parse(json, tenant + "/" + id);
  }
}
