package dev.weir.storage.tsdb.labels;

import java.util.Comparator;

/**
 * Orders strings as their UTF-8 bytes compare, which is Go's string order and therefore the
 * order Prometheus' index requires for symbols and series. {@link String#compareTo} compares
 * UTF-16 units and differs for characters beyond U+FFFF against U+E000..U+FFFF; comparing code
 * points at the first difference fixes that.
 */
public final class Utf8Order {
  public static final Comparator<String> COMPARATOR = Utf8Order::compare;

  private Utf8Order() {}

  public static int compare(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char ca = a.charAt(i);
      char cb = b.charAt(i);
      if (ca != cb) {
        if (Character.isSurrogate(ca) || Character.isSurrogate(cb)) {
          return Integer.compare(a.codePointAt(i), b.codePointAt(i));
        }
        return ca - cb;
      }
    }
    return a.length() - b.length();
  }
}
