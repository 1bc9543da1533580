package dev.weir.storage.tsdb.head;

import java.util.List;

/**
 * Outcome of {@link Appender#commit()}.
 *
 * @param appended samples stored
 * @param duplicates samples identical to the newest of their series, accepted and not stored again
 * @param rejections samples refused, in request order
 */
public record CommitResult(int appended, int duplicates, List<Rejection> rejections) {}
