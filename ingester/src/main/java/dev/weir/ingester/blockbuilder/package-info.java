/**
 * The {@code block-builder} target: cycles of a batching consumer that turn partitions into
 * Prometheus-format blocks in the bucket.
 */
@NullMarked
package dev.weir.ingester.blockbuilder;

import org.jspecify.annotations.NullMarked;
