package dev.weir.ingester.tool;

import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import org.jspecify.annotations.Nullable;

/**
 * The range flags of the subcommands that read records: a partition and either offsets
 * ({@code from-offset} inclusive, {@code to-offset} exclusive; the log start and end by default)
 * or record timestamps ({@code from-time}, {@code to-time}: the first record at or after each).
 * Resolution checks the range against the log: an offset outside it is a failure naming the
 * log's bounds. Not thread-safe.
 */
final class RangeFlags {
  /** A resolved range {@code [from, to)} of one partition. */
  record Range(String topic, int partition, long from, long to) {
    long size() {
      return to - from;
    }
  }

  private final Flag<Integer> partition;
  private final Flag<Long> fromOffset;
  private final Flag<Long> toOffset;
  private final Flag<String> fromTime;
  private final Flag<String> toTime;

  RangeFlags(FlagSet fs) {
    partition = fs.integer("partition", -1, "Partition to read (required).");
    fromOffset = fs.int64("from-offset", -1, "First offset to read (inclusive); -1 = the log start.");
    toOffset = fs.int64("to-offset", -1, "Offset to stop before (exclusive); -1 = the log end.");
    fromTime = fs.string("from-time", "", "Read from the first record with a timestamp at or after this (RFC 3339,"
        + " or milliseconds since the epoch); instead of --from-offset.");
    toTime = fs.string("to-time", "", "Stop before the first record with a timestamp at or after this (RFC 3339,"
        + " or milliseconds since the epoch); instead of --to-offset.");
  }

  int partition() {
    return partition.get();
  }

  /** Checks what can be checked without Kafka. */
  void validate() throws ToolException {
    if (partition.get() < 0) {
      throw ToolException.usage("--partition is required (and not negative)");
    }
    boolean offsets = fromOffset.isSet() || toOffset.isSet();
    boolean times = fromTime.isSet() || toTime.isSet();
    if (offsets && times) {
      throw ToolException.usage("give either --from-offset/--to-offset or --from-time/--to-time, not both");
    }
    if (fromOffset.get() >= 0 && toOffset.get() >= 0 && fromOffset.get() > toOffset.get()) {
      throw ToolException.usage("--from-offset " + fromOffset.get() + " is after --to-offset " + toOffset.get());
    }
    Long from = time(fromTime);
    Long to = time(toTime);
    if (from != null && to != null && from > to) {
      throw ToolException.usage("--from-time is after --to-time");
    }
  }

  /** The range in {@code topic}, checked against its log. */
  Range resolve(TopicLog log, String topic) throws ToolException {
    int p = partition.get();
    log.checkPartition(topic, p);
    TopicLog.Bounds b = log.bounds(topic, p);
    long from = b.start();
    long to = b.end();
    Long fromMs = time(fromTime);
    Long toMs = time(toTime);
    if (fromMs != null) {
      Long o = log.offsetForTime(topic, p, fromMs);
      from = o == null ? b.end() : o;
    }
    if (toMs != null) {
      Long o = log.offsetForTime(topic, p, toMs);
      to = o == null ? b.end() : o;
    }
    if (fromOffset.get() >= 0) {
      from = checked("--from-offset", fromOffset.get(), b, topic, p);
    }
    if (toOffset.get() >= 0) {
      to = checked("--to-offset", toOffset.get(), b, topic, p);
    }
    return new Range(topic, p, from, Math.max(from, to));
  }

  private static long checked(String flag, long offset, TopicLog.Bounds b, String topic, int p)
      throws ToolException {
    if (!b.contains(offset)) {
      throw ToolException.failure(flag + " " + offset + " is outside the log of " + topic + " partition " + p
          + ": offsets " + b + " (start inclusive, end exclusive)");
    }
    return offset;
  }

  /** The flag's time in milliseconds, or null when not given. */
  private static @Nullable Long time(Flag<String> f) throws ToolException {
    String s = f.get().trim();
    if (s.isEmpty()) {
      return null;
    }
    if (s.chars().allMatch(Character::isDigit)) {
      try {
        return Long.parseLong(s);
      } catch (NumberFormatException e) {
        throw ToolException.usage("--" + f.name() + " " + s + " is too large");
      }
    }
    try {
      return OffsetDateTime.parse(s).toInstant().toEpochMilli();
    } catch (DateTimeException | ArithmeticException e) {
      throw ToolException.usage("--" + f.name() + " \"" + s + "\" is neither RFC 3339 nor milliseconds since the"
          + " epoch");
    }
  }
}
