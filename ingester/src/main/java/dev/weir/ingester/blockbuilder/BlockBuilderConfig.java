package dev.weir.ingester.blockbuilder;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.ingest.batch.BatchConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Settings of the {@code block-builder} target (Mimir's {@code -block-builder.*} flags where the
 * concept is the same); the bucket it uploads to is {@link dev.weir.ingester.config.BucketConfig}.
 *
 * @param partitions partitions to build, or empty to take the one named by the instance ID
 */
public record BlockBuilderConfig(List<Integer> partitions, String consumerGroup, Duration consumeInterval,
    Duration consumeIntervalBuffer, Duration lookbackOnNoCommit, long maxRecordsPerCycle, long maxBytesPerCycle,
    Duration cycleTimeout) {

  /** Flag definitions. */
  public static final class Flags {
    private final Flag<List<String>> partitions;
    private final Flag<String> group;
    private final Flag<Duration> interval;
    private final Flag<Duration> buffer;
    private final Flag<Duration> lookback;
    private final Flag<Long> maxRecords;
    private final Flag<Long> maxBytes;
    private final Flag<Duration> timeout;

    public Flags(FlagSet fs) {
      partitions = fs.list("block-builder.partitions", List.of(), "Partitions this block-builder builds, served"
          + " round-robin (comma-separated). Empty: the one partition named by the trailing number of --ingester.id"
          + " (block-builder-3 builds partition 3).");
      group = fs.string("block-builder.consumer-group", "block-builder", "Kafka consumer group that stores the"
          + " block-builders' committed offsets (used only for offsets; partitions are assigned, not subscribed).");
      interval = fs.duration("block-builder.consume-interval", Duration.ofHours(1), "Span of record time one"
          + " cycle consumes (aligned, e.g. 12:00-13:00); one block per tenant and block range per cycle.");
      buffer = fs.duration("block-builder.consume-interval-buffer", Duration.ofMinutes(15), "Wall time to wait"
          + " after a span ends before consuming it, for late records.");
      lookback = fs.duration("block-builder.lookback-on-no-commit", Duration.ofHours(12), "Without a committed"
          + " offset, start with records this old.");
      maxRecords = fs.int64("block-builder.max-records-per-cycle", BatchConfig.DEFAULT_MAX_RECORDS_PER_CYCLE, "End a"
          + " cycle after this many records: flush blocks of what it holds, commit, and continue with the next"
          + " cycle (it also starts a cycle of a span still filling once that many wait); 0 for no limit.");
      maxBytes = fs.int64("block-builder.max-bytes-per-cycle", BatchConfig.DEFAULT_MAX_BYTES_PER_CYCLE, "Record"
          + " bytes a cycle holds in memory at most: before the record that would pass it, flush blocks of what"
          + " the cycle holds, commit, and continue with the next cycle; 0 for no limit (memory then grows with"
          + " the backlog).");
      timeout = fs.duration("block-builder.cycle-timeout", Duration.ofMinutes(10), "End a cycle's consumption"
          + " (and flush what it has) after this long.");
    }

    public BlockBuilderConfig build() throws ConfigException {
      List<Integer> parts = new ArrayList<>();
      for (String p : partitions.get()) {
        try {
          int n = Integer.parseInt(p.strip());
          if (n < 0) {
            throw new NumberFormatException();
          }
          parts.add(n);
        } catch (NumberFormatException e) {
          throw new ConfigException("block-builder.partitions: \"" + p + "\" is not a partition number");
        }
      }
      if (interval.get().toMillis() <= 0) {
        throw new ConfigException("block-builder.consume-interval must be positive");
      }
      if (maxRecords.get() < 0 || maxBytes.get() < 0) {
        throw new ConfigException("block-builder.max-records-per-cycle and max-bytes-per-cycle must not be negative");
      }
      if (timeout.get().toMillis() <= 0) {
        throw new ConfigException("block-builder.cycle-timeout must be positive");
      }
      return new BlockBuilderConfig(List.copyOf(parts), group.get(), interval.get(), buffer.get(), lookback.get(),
          maxRecords.get(), maxBytes.get(), timeout.get());
    }
  }
}
