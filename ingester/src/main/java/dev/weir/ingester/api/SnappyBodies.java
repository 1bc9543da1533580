package dev.weir.ingester.api;

import dev.weir.storage.errors.ClientErrorException;
import java.io.IOException;
import org.xerial.snappy.Snappy;

/**
 * Decompresses snappy block-format request bodies (remote write and remote read) with the size
 * the snappy header declares checked against a limit first: {@link Snappy#uncompress(byte[])}
 * allocates whatever the header says, so six bytes could otherwise ask for 2 GiB.
 *
 * <p>Stateless.
 */
final class SnappyBodies {
  private SnappyBodies() {}

  /**
   * The decompressed body.
   *
   * @param maxBytes largest decompressed size accepted
   * @param limitName how the limit is named in the 413 reason (its flag, or what it applies to)
   * @throws ClientErrorException 400 when the body is not snappy or is corrupt; 413 when it
   *     declares more than {@code maxBytes}
   */
  static byte[] uncompress(byte[] body, int maxBytes, String limitName) {
    int declared;
    try {
      declared = Snappy.uncompressedLength(body);
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the body is not snappy-compressed (block format): " + e.getMessage());
    }
    // A header above 2^31 - 1 reads as a negative int.
    if (declared < 0 || declared > maxBytes) {
      throw new ClientErrorException("request_too_large", "the body decompresses to "
          + Integer.toUnsignedString(declared) + " bytes, more than the limit of " + maxBytes + " (" + limitName + ")",
          413);
    }
    try {
      return Snappy.uncompress(body);
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the snappy body is corrupt or truncated: " + e.getMessage());
    }
  }
}
