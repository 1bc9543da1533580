package dev.weir.ingester.api;

import dev.weir.ingester.config.Durations;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * How fresh a query's answer is, told to its client: the header {@value #HEADER} (Unix seconds,
 * millisecond precision) with the consumed-up-to time of the least consumed Kafka partition the
 * answer was read from, and — when {@code --querier.max-partition-lag} is set — a warning per
 * partition lagging more than that (in the Prometheus JSON responses' {@code warnings}), or with
 * {@code --querier.fail-on-high-partition-lag} a 503 instead of the answer (Tempo's "fail on high
 * lag"). A partition whose consumption is not known yet counts as lagging. No header when no
 * partition was read (classic mode, blocks only) or one's consumed-up-to time is unknown.
 *
 * <pre>{@code
 * QueryFreshness.Verdict v = freshness.check(reader.freshness());   // throws when failing on lag
 * ex.respond(200, JSON, body, v.headers());
 * }</pre>
 *
 * @param maxLag 0: no warning and no failure
 * @param failOnHighLag answer 503 instead of warning
 */
public record QueryFreshness(Duration maxLag, boolean failOnHighLag, LongSupplier clock) {
  public static final String HEADER = "X-Weir-Consumed-Up-To";

  /** Neither warns nor fails; the header is still set. */
  public static QueryFreshness headerOnly(LongSupplier clock) {
    return new QueryFreshness(Duration.ZERO, false, clock);
  }

  /** What to tell the client: response headers and warnings. */
  public record Verdict(Map<String, String> headers, List<String> warnings) {}

  /**
   * @throws ServerErrorException (503) naming each lagging partition, when failing on lag
   */
  public Verdict check(List<PartitionFreshness> partitions) {
    long now = clock.getAsLong();
    long oldest = Long.MAX_VALUE;
    boolean unknown = partitions.isEmpty();
    List<String> lagging = new ArrayList<>();
    for (PartitionFreshness f : partitions) {
      long upTo = f.consumedUpToMillis();
      if (upTo < 0) {
        unknown = true;
        if (!maxLag.isZero()) {
          lagging.add("partition " + f.partition() + ": how far it is consumed is not known yet");
        }
        continue;
      }
      oldest = Math.min(oldest, upTo);
      if (!maxLag.isZero() && now - upTo > maxLag.toMillis()) {
        lagging.add(String.format(Locale.ROOT, "partition %d is consumed only up to %.3fs ago (%d records behind),"
            + " more than --querier.max-partition-lag=%s: recent samples may be missing", f.partition(),
            (now - upTo) / 1000.0, f.recordsBehind(), Durations.format(maxLag)));
      }
    }
    if (failOnHighLag && !lagging.isEmpty()) {
      throw new ServerErrorException(String.join("; ", lagging) + " (--querier.fail-on-high-partition-lag)");
    }
    Map<String, String> headers = unknown ? Map.of()
        : Map.of(HEADER, String.format(Locale.ROOT, "%d.%03d", oldest / 1000, oldest % 1000));
    return new Verdict(headers, List.copyOf(lagging));
  }
}
