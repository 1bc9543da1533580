package dev.weir.ingester.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations written as in Prometheus and Mimir: a sequence of number+unit such as {@code 1h30m},
 * {@code 500ms}, {@code 15s}, {@code 2h}, {@code 7d}, {@code 1w}, {@code 1y}; {@code 0} alone is
 * zero. Stateless.
 */
public final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|us|µs|ns|s|m|h|d|w|y)");

  private Durations() {}

  public static Duration parse(String text) {
    String s = text.trim();
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    Matcher m = PART.matcher(s);
    int pos = 0;
    double nanos = 0;
    while (pos < s.length()) {
      if (!m.find(pos) || m.start() != pos) {
        throw new IllegalArgumentException(
            "not a duration (expected e.g. 15s, 500ms, 1h30m, 7d): " + text);
      }
      double n = Double.parseDouble(m.group(1));
      nanos += n * unitNanos(m.group(2));
      pos = m.end();
    }
    return Duration.ofNanos(Math.round(nanos));
  }

  private static double unitNanos(String unit) {
    return switch (unit) {
      case "ns" -> 1;
      case "us", "µs" -> 1e3;
      case "ms" -> 1e6;
      case "s" -> 1e9;
      case "m" -> 60e9;
      case "h" -> 3600e9;
      case "d" -> 86400e9;
      case "w" -> 7 * 86400e9;
      case "y" -> 365 * 86400e9;
      default -> throw new IllegalArgumentException("unknown unit " + unit);
    };
  }

  /** Text that parses back to the same duration, e.g. {@code 1h30m}, {@code 250ms}. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    long nanos = d.toNanos();
    if (nanos % 1_000_000 != 0) {
      return nanos + "ns";
    }
    long ms = nanos / 1_000_000;
    if (ms % 1000 != 0) {
      return ms + "ms";
    }
    long s = ms / 1000;
    StringBuilder sb = new StringBuilder();
    if (s >= 3600) {
      sb.append(s / 3600).append('h');
    }
    if (s % 3600 >= 60) {
      sb.append(s % 3600 / 60).append('m');
    }
    if (s % 60 > 0) {
      sb.append(s % 60).append('s');
    }
    return sb.toString();
  }
}
