/**
 * Remote-write requests read straight from their protobuf bytes: the hot path of every push and
 * of the Kafka reader. {@link dev.weir.storage.wire.WireBatch} checks a request's structure once
 * and keeps where each series' bytes are; {@link dev.weir.storage.wire.WireSeries} walks one
 * series without building objects, hashes its label bytes the way
 * {@link dev.weir.storage.tsdb.labels.Labels#hashCode()} hashes strings, and finds the existing
 * series by that hash, so Strings are built only for new series.
 */
@NullMarked
package dev.weir.storage.wire;

import org.jspecify.annotations.NullMarked;
