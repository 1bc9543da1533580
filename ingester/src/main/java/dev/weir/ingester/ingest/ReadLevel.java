package dev.weir.ingester.ingest;

import dev.weir.storage.errors.ClientErrorException;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * What a read must see before it runs, from {@code X-Read-Consistency} ({@code strong} or
 * {@code eventual}, Mimir's values) and {@code X-Read-Consistency-Offsets} (Mimir's
 * {@code ReadConsistencyOffsets}): partition → offset of the last record a write produced there,
 * as a distributor returns them in {@value #PRODUCED_OFFSETS_HEADER}. An ingester whose partition is
 * named waits until it has consumed that record; one whose partition is not named waits for its end
 * offset when the read is strong, else not at all.
 *
 * <pre>{@code
 * ReadLevel l = ReadLevel.parse(ex.header(CONSISTENCY_HEADER), ex.header(OFFSETS_HEADER));  // 400 when bad
 * String header = ReadLevel.formatOffsets(Map.of(3, 1042L, 5, 77L));                        // "3:1042,5:77"
 * }</pre>
 *
 * @param strong {@code X-Read-Consistency: strong}
 * @param offsets partition → last offset to have consumed; empty when not given
 */
public record ReadLevel(boolean strong, Map<Integer, Long> offsets) {
  public static final String CONSISTENCY_HEADER = "X-Read-Consistency";
  public static final String OFFSETS_HEADER = "X-Read-Consistency-Offsets";
  /** The distributor's answer to a write in Kafka mode: partition:offset of the last record per partition. */
  public static final String PRODUCED_OFFSETS_HEADER = "X-Weir-Produced-Offsets";
  /** Most partitions one offsets header may name; a topic has far fewer, so more is garbage. */
  static final int MAX_PARTITIONS = 10_000;

  public static final ReadLevel EVENTUAL = new ReadLevel(false, Map.of());
  public static final ReadLevel STRONG = new ReadLevel(true, Map.of());

  public ReadLevel {
    offsets = Map.copyOf(offsets);
  }

  /** Whether the read waits for anything. */
  public boolean waits() {
    return strong || !offsets.isEmpty();
  }

  /**
   * Parses the two headers (either may be absent).
   *
   * @throws ClientErrorException (400, reason {@code bad_data}) naming the header and what is wrong
   */
  public static ReadLevel parse(@Nullable String consistency, @Nullable String offsets) {
    boolean strong = false;
    if (consistency != null && !consistency.isBlank()) {
      String c = consistency.trim().toLowerCase(Locale.ROOT);
      if (c.equals("strong")) {
        strong = true;
      } else if (!c.equals("eventual")) {
        throw new ClientErrorException("bad_data", CONSISTENCY_HEADER + ": \"" + consistency
            + "\" is neither \"strong\" nor \"eventual\"");
      }
    }
    Map<Integer, Long> parsed = offsets == null || offsets.isBlank() ? Map.of() : parseOffsets(offsets, OFFSETS_HEADER);
    if (!strong && parsed.isEmpty()) {
      return EVENTUAL;
    }
    return new ReadLevel(strong, parsed);
  }

  /**
   * Parses {@code partition:offset} pairs separated by commas ({@code 3:1042,5:77}).
   *
   * @param what names the header in errors
   * @throws ClientErrorException (400) for a malformed pair, a negative number, a partition named
   *     twice, or more than {@value #MAX_PARTITIONS} pairs
   */
  public static Map<Integer, Long> parseOffsets(String value, String what) {
    Map<Integer, Long> out = new TreeMap<>();
    for (String pair : value.split(",", -1)) {
      String p = pair.trim();
      int colon = p.indexOf(':');
      if (colon <= 0 || colon == p.length() - 1) {
        throw new ClientErrorException("bad_data", what + ": \"" + p + "\" is not partition:offset (e.g. 3:1042)");
      }
      int partition;
      long offset;
      try {
        partition = Integer.parseInt(p.substring(0, colon).trim());
        offset = Long.parseLong(p.substring(colon + 1).trim());
      } catch (NumberFormatException e) {
        throw new ClientErrorException("bad_data", what + ": \"" + p + "\" is not partition:offset with whole numbers");
      }
      if (partition < 0 || offset < 0) {
        throw new ClientErrorException("bad_data", what + ": \"" + p + "\": partition and offset must not be negative");
      }
      if (out.put(partition, offset) != null) {
        throw new ClientErrorException("bad_data", what + ": partition " + partition + " is named twice");
      }
      if (out.size() > MAX_PARTITIONS) {
        throw new ClientErrorException("bad_data", what + ": more than " + MAX_PARTITIONS + " partitions");
      }
    }
    return out;
  }

  /** {@code partition:offset} pairs by partition, comma-separated; the inverse of {@link #parseOffsets}. */
  public static String formatOffsets(Map<Integer, Long> offsets) {
    StringJoiner j = new StringJoiner(",");
    new TreeMap<>(offsets).forEach((p, o) -> j.add(p + ":" + o));
    return j.toString();
  }

  /** The header value to pass on to ingesters, or null when no offsets were given. */
  public @Nullable String offsetsHeader() {
    return offsets.isEmpty() ? null : formatOffsets(offsets);
  }
}
