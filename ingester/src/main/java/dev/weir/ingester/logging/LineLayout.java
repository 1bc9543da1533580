package dev.weir.ingester.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.LayoutBase;
import java.time.Instant;
import java.util.Locale;

/**
 * Formats each log event as exactly one line, logfmt ({@code ts=… level=info component=…
 * msg="…"}) or JSON. A message written as {@code key=value} pairs ({@code msg="…" partition=3})
 * is kept as pairs in logfmt; otherwise it becomes the quoted {@code msg}. Exceptions are folded
 * into an {@code err} field so one event never spans lines.
 *
 * <p>Thread-safe (stateless apart from the format set at configuration).
 */
public final class LineLayout extends LayoutBase<ILoggingEvent> {
  private boolean json;

  public void setFormat(String format) {
    this.json = "json".equals(format);
  }

  @Override
  public String doLayout(ILoggingEvent event) {
    String ts = Instant.ofEpochMilli(event.getTimeStamp()).toString();
    String level = event.getLevel().toString().toLowerCase(Locale.ROOT);
    String logger = event.getLoggerName();
    String component = logger.substring(logger.lastIndexOf('.') + 1);
    String msg = event.getFormattedMessage();
    IThrowableProxy tp = event.getThrowableProxy();
    String err = tp == null ? null : ThrowableProxyUtil.asString(tp);
    StringBuilder sb = new StringBuilder(128);
    if (json) {
      sb.append("{\"ts\":\"").append(ts).append("\",\"level\":\"").append(level)
          .append("\",\"component\":\"").append(component).append("\",\"thread\":");
      jsonString(sb, event.getThreadName());
      sb.append(",\"msg\":");
      jsonString(sb, msg);
      if (err != null) {
        sb.append(",\"err\":");
        jsonString(sb, err);
      }
      return sb.append("}\n").toString();
    }
    sb.append("ts=").append(ts).append(" level=").append(level).append(" component=").append(component);
    if (looksLikePairs(msg)) {
      sb.append(' ').append(msg.replace("\n", "\\n"));
    } else {
      sb.append(" msg=");
      logfmtQuote(sb, msg);
    }
    if (err != null) {
      sb.append(" err=");
      logfmtQuote(sb, err);
    }
    return sb.append('\n').toString();
  }

  private static boolean looksLikePairs(String msg) {
    return msg.startsWith("msg=\"");
  }

  private static void logfmtQuote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> { }
        default -> sb.append(c);
      }
    }
    sb.append('"');
  }

  static void jsonString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
