package dev.weir.ingester.api;

import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses a PromQL series selector as used by {@code match[]}: {@code metric}, {@code metric{a="b"}},
 * {@code {a=~"x.*", b!="y"}}. Strings may be double-, single- or back-quoted, with Go escapes in
 * the first two. Errors are client errors (HTTP 400) saying where parsing stopped.
 *
 * <p>Stateless and thread-safe.
 */
public final class SelectorParser {
  private final String in;
  private int pos;

  private SelectorParser(String in) {
    this.in = in;
  }

  /** The matchers of a selector; at least one of them must not match the empty string. */
  public static List<Matcher> parse(String selector) {
    SelectorParser p = new SelectorParser(selector);
    List<Matcher> ms = p.selector();
    boolean hasNonEmpty = ms.stream().anyMatch(m -> !m.matchesEmpty());
    if (!hasNonEmpty) {
      throw bad("vector selector must contain at least one non-empty matcher: " + selector);
    }
    return ms;
  }

  private List<Matcher> selector() {
    List<Matcher> ms = new ArrayList<>();
    skipSpace();
    if (pos < in.length() && isNameStart(in.charAt(pos), true)) {
      String metric = identifier(true);
      ms.add(Matcher.eq(Labels.METRIC_NAME, metric));
      skipSpace();
    }
    if (pos < in.length() && in.charAt(pos) == '{') {
      pos++;
      skipSpace();
      while (pos < in.length() && in.charAt(pos) != '}') {
        ms.add(matcher());
        skipSpace();
        if (pos < in.length() && in.charAt(pos) == ',') {
          pos++;
          skipSpace();
        } else if (pos < in.length() && in.charAt(pos) != '}') {
          throw error("expected ',' or '}'");
        }
      }
      if (pos >= in.length()) {
        throw error("unclosed '{'");
      }
      pos++;
      skipSpace();
    }
    if (pos != in.length()) {
      throw error("unexpected character '" + in.charAt(pos) + "'");
    }
    if (ms.isEmpty()) {
      throw error("empty selector");
    }
    return ms;
  }

  private Matcher matcher() {
    if (pos >= in.length() || !isNameStart(in.charAt(pos), false)) {
      throw error("expected a label name");
    }
    String name = identifier(false);
    skipSpace();
    Matcher.Type type;
    if (in.startsWith("=~", pos)) {
      type = Matcher.Type.RE;
      pos += 2;
    } else if (in.startsWith("!~", pos)) {
      type = Matcher.Type.NRE;
      pos += 2;
    } else if (in.startsWith("!=", pos)) {
      type = Matcher.Type.NEQ;
      pos += 2;
    } else if (in.startsWith("=", pos)) {
      type = Matcher.Type.EQ;
      pos += 1;
    } else {
      throw error("expected one of =, !=, =~, !~ after label " + name);
    }
    skipSpace();
    String value = string();
    try {
      return Matcher.of(type, name, value);
    } catch (IllegalArgumentException e) {
      throw bad(e.getMessage());
    }
  }

  private String identifier(boolean metric) {
    int start = pos;
    while (pos < in.length() && isNameChar(in.charAt(pos), metric)) {
      pos++;
    }
    return in.substring(start, pos);
  }

  private String string() {
    if (pos >= in.length()) {
      throw error("expected a quoted string");
    }
    char q = in.charAt(pos);
    if (q != '"' && q != '\'' && q != '`') {
      throw error("expected a quoted string");
    }
    pos++;
    StringBuilder sb = new StringBuilder();
    while (pos < in.length()) {
      char c = in.charAt(pos++);
      if (c == q) {
        return sb.toString();
      }
      if (c == '\\' && q != '`') {
        if (pos >= in.length()) {
          break;
        }
        char e = in.charAt(pos++);
        switch (e) {
          case 'n' -> sb.append('\n');
          case 't' -> sb.append('\t');
          case 'r' -> sb.append('\r');
          case 'a' -> sb.append('\u0007');
          case 'b' -> sb.append('\b');
          case 'f' -> sb.append('\f');
          case 'v' -> sb.append('\u000b');
          case '\\', '"', '\'' -> sb.append(e);
          case 'x' -> sb.append((char) hex(2));
          case 'u' -> sb.append((char) hex(4));
          case 'U' -> sb.appendCodePoint(hex(8));
          default -> throw error("unknown escape sequence \\" + e);
        }
      } else {
        sb.append(c);
      }
    }
    throw error("unterminated string");
  }

  private int hex(int digits) {
    if (pos + digits > in.length()) {
      throw error("short escape sequence");
    }
    try {
      int v = Integer.parseUnsignedInt(in.substring(pos, pos + digits), 16);
      pos += digits;
      return v;
    } catch (NumberFormatException e) {
      throw error("bad escape sequence");
    }
  }

  private void skipSpace() {
    while (pos < in.length() && Character.isWhitespace(in.charAt(pos))) {
      pos++;
    }
  }

  private static boolean isNameStart(char c, boolean metric) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':');
  }

  private static boolean isNameChar(char c, boolean metric) {
    return isNameStart(c, metric) || (c >= '0' && c <= '9');
  }

  private ClientErrorException error(String what) {
    return bad("parse error at char " + (pos + 1) + " of selector " + in + ": " + what);
  }

  private static ClientErrorException bad(String message) {
    return new ClientErrorException("bad_data", message);
  }
}
