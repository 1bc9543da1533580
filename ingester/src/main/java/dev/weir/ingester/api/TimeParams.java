package dev.weir.ingester.api;

import dev.weir.storage.errors.ClientErrorException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import org.jspecify.annotations.Nullable;

/**
 * Time parameters as the Prometheus HTTP API takes them: Unix seconds with an optional fraction,
 * or RFC 3339. Results are milliseconds. Stateless.
 */
public final class TimeParams {
  private TimeParams() {}

  /** Parses {@code text}, or returns {@code dflt} when it is null or empty. */
  public static long parse(@Nullable String text, long dflt, String param) {
    if (text == null || text.isEmpty()) {
      return dflt;
    }
    try {
      BigDecimal seconds = new BigDecimal(text);
      return seconds.movePointRight(3).setScale(0, RoundingMode.HALF_UP).longValueExact();
    } catch (NumberFormatException | ArithmeticException e) {
      // not a number: try RFC 3339
    }
    try {
      return OffsetDateTime.parse(text).toInstant().toEpochMilli();
    } catch (DateTimeParseException | ArithmeticException e) {
      throw new ClientErrorException("bad_data",
          "invalid parameter \"" + param + "\": cannot parse \"" + text + "\" to a valid timestamp");
    }
  }
}
