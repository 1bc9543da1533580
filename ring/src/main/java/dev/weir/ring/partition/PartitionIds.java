package dev.weir.ring.partition;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The partition an ingester consumes is the trailing number of its ID. Stateless. */
public final class PartitionIds {
  private static final Pattern TRAILING = Pattern.compile("^(.*\\D)?(\\d+)$");

  private PartitionIds() {}

  /**
   * {@code ingester-zone-b-12} → 12.
   *
   * @throws IllegalArgumentException naming the ID when it does not end with a number
   */
  public static int fromInstanceId(String id) {
    Matcher m = TRAILING.matcher(id);
    if (!m.matches()) {
      throw new IllegalArgumentException("ingester ID \"" + id + "\" does not end with a number: in Kafka mode the"
          + " trailing number of the ID is the partition the ingester consumes (e.g. ingester-zone-a-7 owns"
          + " partition 7); set --ingester.id accordingly");
    }
    String digits = m.group(2);
    if (digits.length() > 9) {
      throw new IllegalArgumentException("ingester ID \"" + id + "\": partition number " + digits + " is too large");
    }
    return Integer.parseInt(digits);
  }
}
