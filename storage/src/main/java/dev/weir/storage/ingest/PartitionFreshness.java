package dev.weir.storage.ingest;

/**
 * How far one partition reader has consumed, as reported to queries ({@code X-Weir-Consumed-Up-To})
 * and to {@code /api/v1/user_lag}. Offsets follow Kafka's convention; -1 where nothing is known yet.
 *
 * <p>{@code consumedUpToMillis} is the latest wall-clock time T such that every record the
 * partition acknowledged before T has been consumed (its samples are readable): the time an end
 * offset probe was sent whose answer the reader has since reached, or else the timestamp of the
 * last record consumed, whichever is later. A caught-up reader's value trails now by at most the
 * probe interval ({@value TopicWatch#END_PROBE_MILLIS} ms) plus a round trip; a stalled reader's
 * (or one that cannot reach Kafka) stops moving, so its lag grows.
 *
 * @param partition the partition
 * @param consumedOffset the offset after the last record fully appended (next to read)
 * @param endOffset the partition's end offset as last seen (probe or fetch), -1 unknown
 * @param recordsBehind {@code endOffset - consumedOffset}, at least 0; -1 unknown
 * @param consumedUpToMillis see above; -1 unknown
 * @param ready the reader serves consistent data ({@code /ready} would pass for it)
 */
public record PartitionFreshness(int partition, long consumedOffset, long endOffset, long recordsBehind,
    long consumedUpToMillis, boolean ready) {

  /** Seconds between {@code nowMillis} and {@link #consumedUpToMillis}, at least 0; -1 unknown. */
  public double lagSeconds(long nowMillis) {
    return consumedUpToMillis < 0 ? -1 : Math.max(0, nowMillis - consumedUpToMillis) / 1000.0;
  }
}
