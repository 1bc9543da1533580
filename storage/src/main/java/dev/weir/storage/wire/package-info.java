/**
 * Remote-write requests read straight from their protobuf bytes: the hot path of every push and
 * of the Kafka reader. {@link dev.weir.storage.wire.WireBatch} checks a request's structure once
 * and keeps where each series' bytes are; {@link dev.weir.storage.wire.WireSeries} walks one
 * series without building objects, hashes its label bytes the way
 * {@link dev.weir.storage.tsdb.labels.Labels#hashCode()} hashes strings, and finds the existing
 * series by that hash, so Strings are built only for new series. Remote write 2.0 requests take
 * the same path ({@link dev.weir.storage.wire.WireBatch#parseV2}): label positions point at the
 * bytes of the request's symbols, and an invalid series is refused on its own
 * ({@link dev.weir.storage.wire.InvalidSeriesException}).
 */
@NullMarked
package dev.weir.storage.wire;

import org.jspecify.annotations.NullMarked;
