package dev.weir.storage.tsdb.block;

import java.security.SecureRandom;

/**
 * ULIDs (26 Crockford base32 characters: 48 bits of milliseconds, 80 bits of entropy), the block
 * IDs Prometheus uses. Sorting IDs sorts blocks by creation time.
 */
public final class Ulid {
  private static final char[] ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ulid() {}

  /** A new ULID for {@code millis} with random entropy. */
  public static String random(long millis) {
    byte[] entropy = new byte[10];
    RANDOM.nextBytes(entropy);
    return of(millis, entropy);
  }

  /** The ULID for {@code millis} and exactly these 10 bytes of entropy (deterministic IDs). */
  public static String of(long millis, byte[] entropy) {
    if (entropy.length != 10) {
      throw new IllegalArgumentException("ULID entropy is 10 bytes");
    }
    if (millis < 0 || millis >= (1L << 48)) {
      throw new IllegalArgumentException("ULID time out of range: " + millis);
    }
    byte[] b = new byte[16];
    for (int i = 0; i < 6; i++) {
      b[i] = (byte) (millis >>> (8 * (5 - i)));
    }
    System.arraycopy(entropy, 0, b, 6, 10);
    // 128 bits as 26 base32 digits: the first digit holds the top 3 bits (zero-padded to 130).
    char[] out = new char[26];
    long hi = 0;
    long lo = 0;
    for (int i = 0; i < 8; i++) {
      hi = (hi << 8) | (b[i] & 0xff);
      lo = (lo << 8) | (b[i + 8] & 0xff);
    }
    for (int i = 25; i >= 0; i--) {
      out[i] = ALPHABET[(int) (lo & 31)];
      lo = (lo >>> 5) | (hi << 59);
      hi >>>= 5;
    }
    return new String(out);
  }

  /** The 16 bytes of a ULID (6 of time, 10 of entropy). */
  public static byte[] bytes(String ulid) {
    if (!isUlid(ulid)) {
      throw new IllegalArgumentException("not a ULID: " + ulid);
    }
    String alphabet = new String(ALPHABET);
    long hi = 0;
    long lo = 0;
    for (int i = 0; i < 26; i++) {
      long d = alphabet.indexOf(ulid.charAt(i));
      hi = (hi << 5) | (lo >>> 59);
      lo = (lo << 5) | d;
    }
    byte[] b = new byte[16];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (hi >>> (8 * (7 - i)));
      b[i + 8] = (byte) (lo >>> (8 * (7 - i)));
    }
    return b;
  }

  /** Whether {@code s} looks like a ULID (a block directory name). */
  public static boolean isUlid(String s) {
    if (s.length() != 26) {
      return false;
    }
    for (int i = 0; i < 26; i++) {
      char c = s.charAt(i);
      if (new String(ALPHABET).indexOf(c) < 0) {
        return false;
      }
    }
    return s.charAt(0) <= '7';
  }
}
