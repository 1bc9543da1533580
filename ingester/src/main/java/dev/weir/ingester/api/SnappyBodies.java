package dev.weir.ingester.api;

import dev.weir.storage.errors.ClientErrorException;
import java.io.IOException;
import org.xerial.snappy.Snappy;

/**
 * Decompresses snappy block-format request bodies (remote write and remote read) with the size
 * the snappy header declares checked against a limit first: {@link Snappy#uncompress(byte[])}
 * allocates whatever the header says, so six bytes could otherwise ask for 2 GiB.
 *
 * <p>{@link #uncompress} is stateless. {@link #uncompressReused} decompresses into a buffer its
 * thread keeps for the next request (remote write: a new array per request was a third of the
 * bytes an ingester allocated under write load); a thread keeps at most {@value #KEPT_BYTES}
 * bytes per buffer, two buffers (the body and its decompression), so the HTTP handler pool holds
 * at most its threads × 2 MiB. Larger bodies get arrays of their own.
 */
final class SnappyBodies {
  private SnappyBodies() {}

  /** Largest buffer a thread keeps between requests. */
  static final int KEPT_BYTES = 1 << 20;

  /** Bytes {@code [0, length)} of {@code array}, which the thread reuses: valid until its next call. */
  record Reused(byte[] array, int length) {}

  /** Per thread: the compressed body, the decompressed one. */
  private static final ThreadLocal<byte[][]> BUFFERS = ThreadLocal.withInitial(() -> new byte[2][0]);

  /** A buffer of at least {@code n} bytes; kept by the thread when at most {@link #KEPT_BYTES}. */
  private static byte[] buffer(int which, int n) {
    byte[][] kept = BUFFERS.get();
    byte[] b = kept[which];
    if (b.length >= n) {
      return b;
    }
    if (n > KEPT_BYTES) {
      return new byte[n];
    }
    // Grow in 64 KiB steps so that bodies of similar sizes share one buffer.
    b = new byte[Math.min(KEPT_BYTES, (n + 0xffff) & ~0xffff)];
    kept[which] = b;
    return b;
  }

  /**
   * {@link #uncompress} of the request body of {@code ex} into buffers the calling thread reuses:
   * the result is valid until the thread's next call, so nothing may keep it past the request.
   */
  static Reused uncompressReused(dev.weir.ingester.server.HttpExchange ex, int maxBytes, String limitName) {
    int n = ex.bodyLength();
    byte[] body = buffer(0, n);
    ex.copyBody(body);
    int declared = declaredLength(body, n, maxBytes, limitName);
    byte[] out = buffer(1, declared);
    try {
      return new Reused(out, Snappy.uncompress(body, 0, n, out, 0));
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the snappy body is corrupt or truncated: " + e.getMessage());
    }
  }

  /**
   * The decompressed body.
   *
   * @param maxBytes largest decompressed size accepted
   * @param limitName how the limit is named in the 413 reason (its flag, or what it applies to)
   * @throws ClientErrorException 400 when the body is not snappy or is corrupt; 413 when it
   *     declares more than {@code maxBytes}
   */
  static byte[] uncompress(byte[] body, int maxBytes, String limitName) {
    declaredLength(body, body.length, maxBytes, limitName);
    try {
      return Snappy.uncompress(body);
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the snappy body is corrupt or truncated: " + e.getMessage());
    }
  }

  /** The decompressed size the snappy header of {@code body[0, n)} declares, checked against {@code maxBytes}. */
  private static int declaredLength(byte[] body, int n, int maxBytes, String limitName) {
    int declared;
    try {
      declared = Snappy.uncompressedLength(body, 0, n);
    } catch (IOException e) {
      throw new ClientErrorException("bad_data", "the body is not snappy-compressed (block format): " + e.getMessage());
    }
    // A header above 2^31 - 1 reads as a negative int.
    if (declared < 0 || declared > maxBytes) {
      throw new ClientErrorException("request_too_large", "the body decompresses to "
          + Integer.toUnsignedString(declared) + " bytes, more than the limit of " + maxBytes + " (" + limitName + ")",
          413);
    }
    return declared;
  }
}
