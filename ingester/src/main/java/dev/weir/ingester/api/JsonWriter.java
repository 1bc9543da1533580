package dev.weir.ingester.api;

import dev.weir.storage.tsdb.labels.Labels;

/**
 * A minimal JSON writer into a StringBuilder, enough for the API responses: strings with proper
 * escaping, label maps, and sample values (finite values as numbers that parse back to the same
 * double; NaN and infinities as the strings {@code "NaN"}, {@code "+Inf"}, {@code "-Inf"}).
 *
 * <p>Not thread-safe.
 */
public final class JsonWriter {
  private final StringBuilder sb;

  public JsonWriter(StringBuilder sb) {
    this.sb = sb;
  }

  public JsonWriter raw(String s) {
    sb.append(s);
    return this;
  }

  public JsonWriter raw(char c) {
    sb.append(c);
    return this;
  }

  public JsonWriter string(String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20 || c == '\u2028' || c == '\u2029') {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
    return this;
  }

  /** {@code {"name":"value",...}} in label order. */
  public JsonWriter labels(Labels labels) {
    sb.append('{');
    for (int i = 0; i < labels.size(); i++) {
      if (i > 0) {
        sb.append(',');
      }
      string(labels.name(i));
      sb.append(':');
      string(labels.value(i));
    }
    sb.append('}');
    return this;
  }

  public JsonWriter value(double v) {
    if (Double.isNaN(v)) {
      sb.append("\"NaN\"");
    } else if (v == Double.POSITIVE_INFINITY) {
      sb.append("\"+Inf\"");
    } else if (v == Double.NEGATIVE_INFINITY) {
      sb.append("\"-Inf\"");
    } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      sb.append((long) v);
      if (v == 0 && Double.doubleToRawLongBits(v) != 0) {
        sb.setLength(sb.length() - 1);
        sb.append("-0");
      }
    } else {
      sb.append(v);
    }
    return this;
  }

  public JsonWriter number(long n) {
    sb.append(n);
    return this;
  }

  public StringBuilder builder() {
    return sb;
  }

  @Override
  public String toString() {
    return sb.toString();
  }
}
