package dev.weir.storage.tsdb.labels;

import java.util.Objects;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jspecify.annotations.Nullable;

/**
 * One label matcher of a selector: {@code name=value}, {@code !=}, {@code =~} or {@code !~}.
 *
 * <p>Semantics follow Prometheus: a series without the label is treated as having the empty value,
 * so {@code {a=""}} selects series without {@code a} and {@code {a!~"x"}} includes them; regular
 * expressions are fully anchored.
 *
 * <p>Thread-safe (immutable).
 */
public final class Matcher {
  /** The four matcher types, in prompb.LabelMatcher.Type order. */
  public enum Type {
    EQ("="),
    NEQ("!="),
    RE("=~"),
    NRE("!~");

    private final String symbol;

    Type(String symbol) {
      this.symbol = symbol;
    }

    public String symbol() {
      return symbol;
    }
  }

  private final Type type;
  private final String name;
  private final String value;
  private final @Nullable Pattern pattern;
  private final boolean matchesEmpty;

  private Matcher(Type type, String name, String value) {
    this.type = type;
    this.name = name;
    this.value = value;
    if (type == Type.RE || type == Type.NRE) {
      try {
        this.pattern = Pattern.compile("^(?:" + value + ")$", Pattern.DOTALL);
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(
            "invalid regular expression " + quote(value) + " for label " + name + ": " + e.getDescription(), e);
      }
    } else {
      this.pattern = null;
    }
    this.matchesEmpty = matches("");
  }

  /**
   * Creates a matcher.
   *
   * @throws IllegalArgumentException when a regular expression does not compile
   */
  public static Matcher of(Type type, String name, String value) {
    return new Matcher(type, name, value);
  }

  public static Matcher eq(String name, String value) {
    return new Matcher(Type.EQ, name, value);
  }

  public static Matcher neq(String name, String value) {
    return new Matcher(Type.NEQ, name, value);
  }

  public static Matcher re(String name, String value) {
    return new Matcher(Type.RE, name, value);
  }

  public static Matcher nre(String name, String value) {
    return new Matcher(Type.NRE, name, value);
  }

  public Type type() {
    return type;
  }

  public String name() {
    return name;
  }

  public String value() {
    return value;
  }

  /** Whether a label value (empty for an absent label) satisfies this matcher. */
  public boolean matches(String v) {
    return switch (type) {
      case EQ -> value.equals(v);
      case NEQ -> !value.equals(v);
      case RE -> Objects.requireNonNull(pattern).matcher(v).matches();
      case NRE -> !Objects.requireNonNull(pattern).matcher(v).matches();
    };
  }

  /** Whether a series without this label is selected. */
  public boolean matchesEmpty() {
    return matchesEmpty;
  }

  /** Whether a whole label set satisfies this matcher. */
  public boolean matches(Labels labels) {
    return matches(labels.getOrEmpty(name));
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Matcher m && m.type == type && m.name.equals(name) && m.value.equals(value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, name, value);
  }

  @Override
  public String toString() {
    return name + type.symbol + quote(value);
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
