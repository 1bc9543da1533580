package dev.weir.storage.tenant;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Mimir's tenant ID rules: 1 to 150 characters out of letters, digits and {@code !-_.*'()}, and
 * neither {@code .} nor {@code ..}. Since a tenant names a directory (its WAL, its blocks), these
 * rules are also what keeps a tenant from naming a path outside the data directory: no separator,
 * no NUL, no parent reference. HTTP, gRPC and the Kafka reader (the record key) all apply them.
 *
 * <p>Stateless.
 */
public final class TenantIds {
  /** Mimir's limit on tenant ID length. */
  public static final int MAX_LENGTH = 150;
  private static final String PUNCTUATION = "!-_.*'()";

  private TenantIds() {}

  /** Why {@code id} is not a valid tenant ID, or null when it is. */
  public static @Nullable String problem(String id) {
    if (id.isEmpty()) {
      return "empty";
    }
    if (id.length() > MAX_LENGTH) {
      return "longer than " + MAX_LENGTH + " characters";
    }
    if (id.equals(".") || id.equals("..")) {
      return "must not be \".\" or \"..\"";
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (!allowed(c)) {
        return "character " + describe(c) + " is not allowed (letters, digits and " + PUNCTUATION + " are)";
      }
    }
    return null;
  }

  /**
   * The tenant named by raw bytes (a Kafka record key), or null when they are not a valid ID;
   * {@link #problem(byte[])} says why. Valid IDs are ASCII, so no charset decoding can go wrong.
   */
  public static @Nullable String fromBytes(byte[] key) {
    return problem(key) == null ? new String(key, StandardCharsets.US_ASCII) : null;
  }

  /** Why the bytes are not a valid tenant ID, or null when they are. */
  public static @Nullable String problem(byte[] key) {
    if (key.length == 0) {
      return "empty";
    }
    if (key.length > MAX_LENGTH) {
      return "longer than " + MAX_LENGTH + " bytes";
    }
    for (byte b : key) {
      if (b < 0 || !allowed((char) b)) {
        return "byte 0x" + String.format("%02x", b & 0xff) + " is not allowed (letters, digits and " + PUNCTUATION
            + " are)";
      }
    }
    String id = new String(key, StandardCharsets.US_ASCII);
    return problem(id);
  }

  private static boolean allowed(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || PUNCTUATION.indexOf(c) >= 0;
  }

  private static String describe(char c) {
    return c < 0x20 || c == 0x7f || c > 0x7e ? String.format("U+%04X", (int) c) : "'" + c + "'";
  }
}
