package dev.weir.storage.tsdb.head;

import java.util.List;

/**
 * Outcome of {@link Appender#commit()}.
 *
 * @param appended samples stored (out-of-order ones included)
 * @param duplicates samples identical to the newest of their series, accepted and not stored again
 * @param rejections samples refused, in request order
 * @param outOfOrder of {@code appended}, the samples stored in the out-of-order head
 */
public record CommitResult(int appended, int duplicates, List<Rejection> rejections, int outOfOrder) {
  public CommitResult(int appended, int duplicates, List<Rejection> rejections) {
    this(appended, duplicates, rejections, 0);
  }
}
