/**
 * Rings: the instance ring (instances, tokens, heartbeats) and the partition ring (partitions,
 * tokens for sharding series, owners), kept in a {@link dev.weir.ring.kv.KvStore}.
 */
@NullMarked
package dev.weir.ring;

import org.jspecify.annotations.NullMarked;
