package dev.weir.ingester.push;

import dev.weir.storage.errors.ClientErrorException;

/**
 * Part of a write was refused as client errors after the rest was stored: carries how many samples
 * and histogram samples were refused ({@link #refused()}), so the remote write 2.0 response can say
 * exactly how many were written, and the gRPC status carries it to a distributor in the trailer
 * {@code weir-refused-samples}.
 */
public final class PartialWriteException extends ClientErrorException {
  private static final long serialVersionUID = 1L;

  private final long refused;
  private final long refusedHistograms;

  public PartialWriteException(String reason, String message, long refused) {
    this(reason, message, refused, 0);
  }

  public PartialWriteException(String reason, String message, long refused, long refusedHistograms) {
    super(reason, message);
    this.refused = refused;
    this.refusedHistograms = refusedHistograms;
  }

  /** Of {@link #refused()}, how many were native histogram samples. */
  public long refusedHistograms() {
    return refusedHistograms;
  }

  /** Samples plus histogram samples refused, each counted once. */
  public long refused() {
    return refused;
  }
}
