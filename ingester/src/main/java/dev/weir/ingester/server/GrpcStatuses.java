package dev.weir.ingester.server;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.ingester.push.PartialWriteException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * Maps Weir's error classes to gRPC statuses whose standard HTTP mapping is the intended one:
 * INVALID_ARGUMENT (400), UNAUTHENTICATED (401), RESOURCE_EXHAUSTED (429), UNAVAILABLE (503),
 * INTERNAL (500).
 */
public final class GrpcStatuses {
  /** Trailer of a partly refused Push: samples plus histogram samples refused ({@link PartialWriteException}). */
  public static final Metadata.Key<String> REFUSED_SAMPLES =
      Metadata.Key.of("weir-refused-samples", Metadata.ASCII_STRING_MARSHALLER);

  /** Trailer of a partly refused Push: of the refused samples, how many were histogram samples. */
  public static final Metadata.Key<String> REFUSED_HISTOGRAMS =
      Metadata.Key.of("weir-refused-histograms", Metadata.ASCII_STRING_MARSHALLER);

  /** Trailer of a partly refused Push: exemplars stored all the same ({@code WriteResponse.exemplars_written}). */
  public static final Metadata.Key<String> WRITTEN_EXEMPLARS =
      Metadata.Key.of("weir-written-exemplars", Metadata.ASCII_STRING_MARSHALLER);

  private GrpcStatuses() {}

  /** The written exemplar count a partly refused Push carried, or 0. */
  public static long writtenExemplars(Throwable t) {
    return count(t, WRITTEN_EXEMPLARS);
  }

  /** The refused histogram count a partly refused Push carried, or 0. */
  public static long refusedHistograms(Throwable t) {
    return count(t, REFUSED_HISTOGRAMS);
  }

  /** A non-negative count in the trailer {@code key} of a failed call, or 0 (absent or malformed). */
  private static long count(Throwable t, Metadata.Key<String> key) {
    Metadata m = Status.trailersFromThrowable(t);
    String v = m == null ? null : m.get(key);
    try {
      return v == null ? 0 : Math.max(0, Long.parseLong(v));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The refused-sample count a partly refused Push carried, or -1 when it carried none. */
  public static long refusedSamples(Throwable t) {
    Metadata m = Status.trailersFromThrowable(t);
    String v = m == null ? null : m.get(REFUSED_SAMPLES);
    try {
      return v == null ? -1 : Long.parseLong(v);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  public static StatusRuntimeException toStatus(Throwable t) {
    return toStatus(t, 0);
  }

  /** {@link #toStatus(Throwable)} for a Push that stored {@code writtenExemplars} exemplars before it was partly refused. */
  public static StatusRuntimeException toStatus(Throwable t, long writtenExemplars) {
    if (t instanceof StatusRuntimeException s) {
      return s;
    }
    if (t instanceof ClientErrorException c) {
      Status base = switch (c.httpStatus()) {
        case 401 -> Status.UNAUTHENTICATED;
        case 429 -> Status.RESOURCE_EXHAUSTED;
        default -> Status.INVALID_ARGUMENT;
      };
      if (c instanceof PartialWriteException p) {
        Metadata trailers = new Metadata();
        trailers.put(REFUSED_SAMPLES, Long.toString(p.refused()));
        trailers.put(REFUSED_HISTOGRAMS, Long.toString(p.refusedHistograms()));
        trailers.put(WRITTEN_EXEMPLARS, Long.toString(writtenExemplars));
        return base.withDescription(c.getMessage()).asRuntimeException(trailers);
      }
      return base.withDescription(c.getMessage()).asRuntimeException();
    }
    if (t instanceof ServerErrorException) {
      return Status.UNAVAILABLE.withDescription(t.getMessage()).withCause(t).asRuntimeException();
    }
    return Status.INTERNAL.withDescription("internal error: " + t).withCause(t).asRuntimeException();
  }

  /** The HTTP status the gRPC status maps to. */
  public static int httpStatus(Status.Code code) {
    return switch (code) {
      case OK -> 200;
      case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400;
      case UNAUTHENTICATED -> 401;
      case PERMISSION_DENIED -> 403;
      case NOT_FOUND -> 404;
      case ALREADY_EXISTS, ABORTED -> 409;
      case RESOURCE_EXHAUSTED -> 429;
      case CANCELLED -> 499;
      case UNIMPLEMENTED -> 501;
      case UNAVAILABLE -> 503;
      case DEADLINE_EXCEEDED -> 504;
      default -> 500;
    };
  }
}
